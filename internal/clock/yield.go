package clock

import "runtime"

func yield() { runtime.Gosched() }
