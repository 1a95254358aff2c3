//go:build linux && !amd64

package sandbox

// legacyCreateCall: this architecture has only the *at forms.
func legacyCreateCall(int32) (createCall, bool) { return createCall{}, false }

var legacyCreateSyscalls []string

func legacyCreating(*seccompNotif) bool { return true }
