//go:build linux && !amd64

package sandbox

// legacyCreateCalls: this architecture has only the *at forms.
var legacyCreateCalls = map[int32]createCall{}

// legacySealedCalls: likewise.
var legacySealedCalls = map[int32]sealedCall{}
