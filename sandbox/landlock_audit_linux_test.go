package sandbox

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAuditFields(t *testing.T) {
	f := auditFields(`audit(1796165837.531:39): domain=1cbac4709 blockers=fs.read_file path="/var/tmp/ws/secret/key" dev="vda" ino=1234`)
	assert.Equal(t, "1cbac4709", f["domain"])
	assert.Equal(t, "fs.read_file", f["blockers"])
	assert.Equal(t, "/var/tmp/ws/secret/key", f["path"])
	// A path holding a space or quote comes hex-encoded.
	f = auditFields(`audit(1.2:3): domain=1 blockers=fs.read_file path=2F746D702F612062 dev="vda" ino=5`)
	assert.Equal(t, "/tmp/a b", f["path"])
	f = auditFields(`audit(1.2:3): domain=1 status=allocated mode=enforcing pid=4242 uid=0 exe="/x" comm="sh"`)
	assert.Equal(t, "4242", f["pid"])
	assert.Equal(t, "allocated", f["status"])
}

// Records arrive as the kernel queues them: a domain's first denial
// before the record naming its creator. Refusals are kept per creator,
// once each until taken, without device-node rights.
func TestLandlockAuditRecords(t *testing.T) {
	a := &landlockAudit{byDomain: map[uint64]*llDomain{}, barriers: map[string]chan struct{}{}}
	a.record(auditLandlockAccess, `audit(1.1:1): domain=a1 blockers=fs.read_file path="/w/secret" dev="x" ino=1`)
	a.record(auditLandlockDomain, `audit(1.1:1): domain=a1 status=allocated mode=enforcing pid=77 uid=0 exe="/t" comm="t"`)
	a.record(auditLandlockAccess, `audit(1.1:2): domain=a1 blockers=fs.read_file path="/w/secret" dev="x" ino=1`)
	a.record(auditLandlockAccess, `audit(1.1:3): domain=a1 blockers=fs.make_char,fs.make_block path="/w/ok" dev="x" ino=2`)
	a.record(auditLandlockAccess, `audit(1.1:4): domain=b2 blockers=fs.read_file path="/other" dev="x" ino=3`)
	a.record(auditLandlockDomain, `audit(1.1:4): domain=b2 status=allocated mode=enforcing pid=88 uid=0 exe="/t" comm="t"`)
	a.mu.Lock()
	got := a.byDomain[0xa1].refused
	a.mu.Unlock()
	assert.Equal(t, []PathRefused{{Path: "/w/secret", Blockers: []string{"fs.read_file"}}}, got)
	a.record(auditLandlockDomain, `audit(1.1:5): domain=c3 status=deallocated denials=1`)
	a.record(auditLandlockDomain, `audit(1.1:5): domain=b2 status=deallocated denials=1`)
	a.mu.Lock()
	_, kept := a.byDomain[0xb2]
	a.mu.Unlock()
	assert.True(t, kept, "a known creator's domain waits to be taken")
}
