package environ

import (
	"runtime"
	"testing"
)

func TestParsers(t *testing.T) {
	x86 := "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n"
	if got := cpuModel(x86); got != "AMD EPYC 7B13" {
		t.Errorf("x86 model %q", got)
	}
	arm := "processor\t: 0\nBogoMIPS\t: 50.00\n\nHardware\t: BCM2835\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n"
	if got := cpuModel(arm); got != "BCM2835" {
		t.Errorf("arm model %q", got)
	}
	if got := memTotal("MemTotal:       24681832 kB\nMemFree:         1234 kB\n"); got != 24681832<<10 {
		t.Errorf("memory %d", got)
	}
	if got := memTotal("garbage"); got != 0 {
		t.Errorf("memory of garbage %d", got)
	}
}

func TestLocalHost(t *testing.T) {
	h := LocalHost()
	if h.Address != "local" || h.Hostname == "" || h.Cores != runtime.NumCPU() || h.OS != runtime.GOOS {
		t.Fatalf("%+v", h)
	}
	if runtime.GOOS == "linux" {
		if h.MemoryBytes <= 0 || h.Kernel == "" || h.FDLimit == 0 {
			t.Errorf("linux host facts missing: %+v", h)
		}
		// A container may hide the clock source; then it says so.
		if h.ClockSource == "" && len(h.Errors) == 0 {
			t.Errorf("no clock source and no error: %+v", h)
		}
	}
}
