package egress

import "github.com/tether-dev/tether/mandate"

// HostFacts returns the mandate facts of an allowed event: a terminal call
// that contacted the event's host. ok is false for refused or invalid
// attempts, which must not become evidence.
//
// The mandate store cannot record these facts yet: mandate.Call has no
// Hosts field, and Store.Observe/Check derive hosts only from command
// arguments. Until it does, callers can feed HostFacts to mandate.Compile
// as mandate.Observation values; see the package tests.
func HostFacts(ev Event) (f mandate.Facts, ok bool) {
	if !ev.Allowed || ev.Host == "" {
		return mandate.Facts{}, false
	}
	return mandate.Facts{Tool: mandate.ToolTerminal, Hosts: []string{ev.Host}}, true
}

// DriftFailure returns the mandate failure a refusal by the enforced
// mandate stands for (family hosts, the host as the rule that would allow
// it); ok is false for any other decision.
func DriftFailure(d Decision) (f mandate.Failure, ok bool) {
	if d.Refusal != RefusedMandate {
		return mandate.Failure{}, false
	}
	return mandate.Failure{Family: mandate.FamilyHosts, Value: d.Host}, true
}
