llcprobe-rt-profile 2
rate 0.001
seed 7
refs 100000
samples 10
threads 1
command ./a.out x
rdhist 1 inf=4 0:3 4992:2 121634816:1
windows 60000 400 2 10 complete
w 0 60000 3 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 2
w 0 40000 12 0 0 0 0 0 12 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
s 0 0
s 0 0
s 1 0
s 0 5000
s 1 5000
s 1 123456789
s 0 inf
s 0 inf
s 1 inf
s 1 inf
