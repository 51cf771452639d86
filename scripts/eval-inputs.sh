# Sourced by scripts/eval-mrc-real.sh and scripts/eval-rt-coverage.sh: the
# inputs their real programs read, the same on every machine.

# eval_text BYTES FILE: words drawn from a 20000-word vocabulary, the word
# of rank k with probability ~ k^(-2/3) (a cube of a uniform), 61-ish
# characters a line.
eval_text() {
  awk -v bytes="$1" 'BEGIN {
    srand(12345); nw = 20000
    for (i = 0; i < nw; i++) { w = ""; l = 2 + int(rand() * 9)
      for (j = 0; j < l; j++) w = w sprintf("%c", 97 + int(rand() * 26)); word[i] = w }
    out = 0; line = ""
    while (out < bytes) { r = rand(); line = line word[int(nw * r * r * r)] " "
      if (length(line) > 60) { print line; out += length(line) + 1; line = "" } } }' >"$2"
  truncate -s "$1" "$2"
}

# eval_sql ROWS FILE: an SQL script that fills, indexes and queries a table
# of ROWS rows.
eval_sql() {
  cat >"$2" <<SQL
CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < $1)
  INSERT INTO t SELECT x, (x * 7919) % 10007, printf('row %d %d', x, x * x) FROM c;
CREATE INDEX tk ON t(k);
SELECT count(*), sum(length(v)) FROM t WHERE k BETWEEN 100 AND 5000;
SELECT k % 100, count(*) FROM t GROUP BY k % 100 ORDER BY 2 DESC LIMIT 3;
SQL
}
