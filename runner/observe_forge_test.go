package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/approval"
)

// forgeScript is a job's script that shapes its own evidence in observe
// mode (the red team's O1, O2, O3) and, once its mandate is approved and
// the host drops a file "go" in the workspace (a poisoned update),
// reads what the forged evidence was to grant. exists() is stat(2),
// which neither observation nor Landlock governs.
const forgeScript = `import os, sys
def tryopen(n):
    try:
        return open(n).read().strip()
    except OSError:
        return ''
case = sys.argv[1]
if case == 'glob':
    for n in ['**', 'secret/**', 'secret/*', '?.txt', 'sub/[a-z]', '{secret,ok}/key', '~', '$HOME']:
        tryopen(n)
    # A file the job makes, named like a tree: a rule for that one file.
    os.makedirs('sub', exist_ok=True)
    open('sub/**', 'w').write('x')
    print(tryopen('ok/file'))
    if os.path.exists('go'):
        print(tryopen('secret/token'))
elif case == 'link':
    if not os.path.exists('ok/x'):
        os.link('secret/token', 'ok/x')
    print(tryopen('ok/x'))
    print(tryopen('ok/file'))
elif case == 'missing':
    for i in range(12):
        tryopen('ok/n%d' % i)
    print(tryopen('ok/file'))
    if os.path.exists('go'):
        print(tryopen('ok/other'))
print('done')
`

// TestObservedEvidenceCannotForge: what a job's script does in observe
// mode cannot write a mandate that lets it read a secret once enforced.
// A failed open of "**" (or another pattern) is a rule for that one name;
// a hard link the script makes of secret/token is evidence of
// secret/token, and the link's name makes no rule (the file has two
// names); twelve failed opens in ok/ do not collapse ok/ into a tree.
// Each case then runs enforced with the payload on, and the secret never
// reaches the result; the refusal is paths drift. On the code before
// this test each enforced run printed the secret.
func TestObservedEvidenceCannotForge(t *testing.T) {
	r, store, ws := landlockRunner(t)
	ctx := t.Context()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "ok"), 0o755))
	for name, text := range map[string]string{
		"forge.py": forgeScript, "ok/file": "ok-file\n", "ok/other": landlockSecret + "\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644))
	}
	for _, tc := range []struct{ name, notInText string }{
		{"glob", `"read:**"`},
		{"link", `"read:ok/x"`},
		{"missing", `"read:ok/**"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := "forge-" + tc.name
			cmd := "python3 forge.py " + tc.name
			run := func() Result {
				return r.Execute(ctx, Batch{Platform: approval.PlatformCron, Job: job, Calls: []RawCall{terminalCall("1", cmd)}}, nil).Results[0]
			}
			obs := run()
			require.Equal(t, ClassSucceeded, obs.Class, "%s %v", obs.Message, obs.Output)
			v, err := store.Compile(ctx, job)
			require.NoError(t, err)
			t.Logf("compiled:\n%s", v.Text)
			assert.NotContains(t, v.Text, tc.notInText)
			switch tc.name {
			case "glob":
				assert.Contains(t, v.Text, `"=sub/**"`, "the file the job made, literally")
				assert.Contains(t, v.Text, `# tried 4 missing names in "."`, "the names tried are no rules")
			case "link":
				assert.Contains(t, v.Text, `read:secret/token`, "the link's source is evidence")
				assert.Contains(t, v.Text, `# no rule for "ok/x": the file has more than one name`)
			case "missing":
				assert.Contains(t, v.Text, `# tried 12 missing names in "ok"`)
			}
			_, err = store.ApproveReviewed(ctx, job, v.Number, v.SHA256, "test")
			require.NoError(t, err)

			require.NoError(t, os.WriteFile(filepath.Join(ws, "go"), nil, 0o644))
			defer os.Remove(filepath.Join(ws, "go"))
			res := run()
			assert.NotContains(t, fmt.Sprint(res.Output), landlockSecret, "the secret reached the result")
			assert.Contains(t, res.Output["stdout"], "ok-file", "the approved work still works: %v", res.Output)
			require.Equal(t, ClassBlocked, res.Class, "%s %v", res.Message, res.Output)
			assert.Equal(t, GateLandlock, res.Gate)
			refused, _ := res.Output["paths_refused"].([]map[string]any)
			require.NotEmpty(t, refused, "the refusal is drift: %v", res.Output)
		})
	}
	// From the host, after the sandboxes are gone: the secret is where
	// it was, unchanged.
	got, err := os.ReadFile(filepath.Join(ws, "secret", "token"))
	require.NoError(t, err)
	assert.Equal(t, landlockSecret+"\n", string(got))
}
