package main

import (
	"fmt"
	"os"
)

// scriptCondition answers testscript conditions that are not built in.
func scriptCondition(cond string) (bool, error) {
	switch cond {
	case "root":
		return os.Geteuid() == 0, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}
