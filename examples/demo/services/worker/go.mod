module example.com/demo/worker

go 1.22
