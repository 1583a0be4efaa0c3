package main

import (
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// processCPU returns the user and system time this process has used.
func processCPU() cpuTimes {
	var creation, exit, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &creation, &exit, &kernel, &user); err != nil {
		return cpuTimes{}
	}
	return cpuTimes{user: filetimeDuration(user), sys: filetimeDuration(kernel)}
}

// filetimeDuration reads a FILETIME that counts time spent, in 100 ns.
func filetimeDuration(ft windows.Filetime) time.Duration {
	return time.Duration(int64(ft.HighDateTime)<<32|int64(ft.LowDateTime)) * 100
}

// peakRSS returns 0: Windows tells an ended child's peak working set only
// through a handle that os.ProcessState no longer holds.
func peakRSS(*os.ProcessState) int64 { return 0 }
