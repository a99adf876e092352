module k8s-wiretap/bench/loadgen

go 1.26
