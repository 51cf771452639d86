# Sourced by eval-mrc.sh and eval-mrc-real.sh: the options of the real
# programs' part (eval-mrc-real.sh's), parsed once for both scripts.
#   real_opt ARGS...  if $1 is one of these options, takes it (and its
#                     value): sets real_shift to the words taken, appends
#                     them to real_args (what eval-mrc.sh passes on) and
#                     sets quick, suite, samplers, user, user_rt; else
#                     returns 1. A missing value is a usage error (exit 2).
quick=0 suite=1 samplers=qemu,rt
user=() user_rt=() real_args=()
real_opt() {
  local name=${0##*/}
  real_shift=1
  case $1 in
    --quick) quick=1 ;;
    --no-suite) suite=0 ;;
    --program | --rt-program | --samplers)
      if (($# < 2)); then
        echo "${name%.sh}: $1 needs a value (see --help)" >&2
        exit 2
      fi
      real_shift=2
      case $1 in
        --program) user+=("$2") ;;
        --rt-program) user_rt+=("$2") ;;
        *)
          case ,$2, in
            ,qemu, | ,rt, | ,qemu,rt, | ,rt,qemu,) samplers=$2 ;;
            *)
              echo "${name%.sh}: --samplers is qemu, rt or qemu,rt, not '$2'" >&2
              exit 2
              ;;
          esac
          ;;
      esac
      ;;
    *) return 1 ;;
  esac
  real_args+=("${@:1:real_shift}")
}
