llcprobe-rt-profile 2
rate 0.001
seed 7
refs 100000
samples 10
threads 1
command ./a.out x
rdhist 1 inf=4 0:3 4992:2 121634816:1
windows off
