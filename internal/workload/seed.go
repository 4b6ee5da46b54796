package workload

import "time"

func seedFromTime() uint64 { return uint64(time.Now().UnixNano()) }
