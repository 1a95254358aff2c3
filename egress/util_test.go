package egress

import "runtime"

func runtimeGosched() { runtime.Gosched() }
