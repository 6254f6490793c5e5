package cluster

// teardownWorkers resets the worker nodes of the multi-node test, if any.
func teardownWorkers() {}
