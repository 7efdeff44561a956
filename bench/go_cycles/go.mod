module gocycles

go 1.19

require pgfence v0.0.0

replace pgfence => ../../go
