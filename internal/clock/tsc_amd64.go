package clock

func rdtsc() int64

const haveTSC = true
