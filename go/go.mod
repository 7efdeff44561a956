module pgfence

go 1.19
