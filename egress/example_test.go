package egress_test

import (
	"context"
	"log"

	"github.com/tether-dev/tether/egress"
	"github.com/tether-dev/tether/mandate"
)

// A sandbox in network mode proxy: make the namespace, serve the proxy in
// it under the profile's lists narrowed by the job's enforced mandate,
// then start the sandbox joined to ns.Path() with ns.Env() added to its
// environment. Compile-only: it needs root.
func ExampleNamespace() {
	ctx := context.Background()
	ns, err := egress.NewNamespace()
	if err != nil {
		log.Fatal(err)
	}
	defer ns.Close()

	pol, err := egress.NewPolicy([]string{"*.github.com", "pypi.org:443"}, []string{"gist.github.com"})
	if err != nil {
		log.Fatal(err)
	}
	store, err := mandate.Open("/var/lib/tether", mandate.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	if e, err := store.Export(ctx, "nightly-build"); err == nil { // enforced
		hosts := &egress.MandateHosts{Job: e.Job, Version: e.Version}
		for _, r := range e.Families[mandate.FamilyHosts] {
			hosts.Rules = append(hosts.Rules, r.Value)
		}
		pol.Mandate = hosts
	}

	p := egress.New(egress.Options{
		Policy: pol,
		Limits: egress.Limits{MaxConns: 32, MaxBytes: 1 << 30},
		OnDecision: func(a egress.Attribution, d egress.Decision) {
			if f, ok := egress.DriftFailure(d); ok {
				log.Printf("run %s: drift %s %s", a.Run, f.Family, f.Value)
			}
		},
		Observe: func(ev egress.Event) {
			log.Printf("%s %s:%d allowed=%v up=%d down=%d", ev.Method, ev.Host, ev.Port, ev.Allowed, ev.Up, ev.Down)
		},
	})
	go p.Serve(ns.Listener())
	defer p.Close()
	p.Begin(egress.Attribution{Run: "run-42", Command: "1"})
	log.Printf("sandbox joins %s with %v", ns.Path(), ns.Env())
}
