package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/config"
)

// twoProfiles loads a config with profiles "alpha" and "beta", each with
// its own workspace and secrets.
func twoProfiles(t *testing.T) (*config.Config, string, string) {
	t.Helper()
	dir := t.TempDir()
	wa, wb := filepath.Join(dir, "wa"), filepath.Join(dir, "wb")
	require.NoError(t, os.Mkdir(wa, 0o700))
	require.NoError(t, os.Mkdir(wb, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "beta.env"), []byte("SHARED=beta-shared\nBETA_ONLY=b-secret\n"), 0o600))
	text := fmt.Sprintf(`default_profile: alpha
profiles:
  alpha:
    terminal:
      cwd: %s
      env_passthrough: [LANG]
      limits: {pids: 11}
    secrets:
      values: {SHARED: alpha-shared, ALPHA_ONLY: a-secret}
  beta:
    terminal:
      cwd: %s
      backend: host
      limits: {pids: 22}
    secrets:
      env_file: beta.env
  broken:
    terminal:
      cwd: %s
    secrets:
      env_file: missing.env
`, wa, wb, filepath.Join(dir, "no-such-dir"))
	path := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	cfg, err := config.Load(path)
	require.NoError(t, err)
	return cfg, wa, wb
}

func TestTerminalScopeUnbound(t *testing.T) {
	_, err := TerminalScopeFrom(t.Context())
	assert.ErrorIs(t, err, ErrTerminalPolicyUnavailable)
	_, err = TerminalScopeFrom(WithTerminalScope(t.Context(), TerminalScope{}))
	assert.ErrorIs(t, err, ErrTerminalPolicyUnavailable, "the zero scope is a refusal")
}

func TestTerminalScopeResolution(t *testing.T) {
	cfg, wa, wb := twoProfiles(t)
	pol, err := TerminalScopeFrom(WithTerminalScope(t.Context(), ResolveTerminalScope(cfg, nil, "", "/")))
	require.NoError(t, err)
	assert.Equal(t, "alpha", pol.Profile, `"" is the default profile`)
	assert.Equal(t, wa, pol.Cwd)
	assert.Equal(t, 11, pol.Limits.Pids)

	pol, err = ResolveTerminalScope(cfg, nil, "beta", "/").Policy()
	require.NoError(t, err)
	assert.Equal(t, wb, pol.Cwd)
	assert.Equal(t, config.BackendHost, pol.Backend)

	// The policy is a copy: changing it does not change the config.
	pol, _ = ResolveTerminalScope(cfg, nil, "alpha", "/").Policy()
	pol.EnvPassthrough[0] = "HOME"
	*pol.PersistCwd = false
	assert.Equal(t, []string{"LANG"}, cfg.Profiles["alpha"].Terminal.EnvPassthrough)
	assert.True(t, *cfg.Profiles["alpha"].Terminal.PersistCwd)

	refusals := map[string]TerminalScope{
		"unknown profile":  ResolveTerminalScope(cfg, nil, "gamma", "/"),
		"load error":       ResolveTerminalScope(nil, errors.New("config.yaml:3: bad"), "alpha", "/"),
		"nil config":       ResolveTerminalScope(nil, nil, "alpha", "/"),
		"missing cwd":      ResolveTerminalScope(cfg, nil, "broken", "/"),
		"hand-built scope": RefuseTerminal("alpha", errors.New("because")),
	}
	for name, s := range refusals {
		t.Run(name, func(t *testing.T) {
			pol, err := TerminalScopeFrom(WithTerminalScope(t.Context(), s))
			assert.ErrorIs(t, err, ErrTerminalPolicyUnavailable)
			assert.Empty(t, pol.Cwd, "a refusal carries no policy")
		})
	}

	// The default profile has no cwd: the caller's is used, and it must exist.
	def, err := config.Default()
	require.NoError(t, err)
	dir := t.TempDir()
	pol, err = ResolveTerminalScope(def, nil, "", dir).Policy()
	require.NoError(t, err)
	assert.Equal(t, dir, pol.Cwd)
	_, err = ResolveTerminalScope(def, nil, "", "").Policy()
	assert.ErrorIs(t, err, ErrTerminalPolicyUnavailable, "no cwd at all is a refusal, not the daemon's cwd")
}

func TestSecretScope(t *testing.T) {
	cfg, _, _ := twoProfiles(t)
	alpha := ResolveSecretScope(cfg, nil, "alpha")
	beta := ResolveSecretScope(cfg, nil, "beta")
	multi := SecretReader{Multiplex: true}

	_, err := multi.Get(t.Context(), "SHARED", "d")
	assert.ErrorIs(t, err, ErrUnscopedSecret)

	ctxA := WithSecretScope(t.Context(), alpha)
	ctxB := WithSecretScope(t.Context(), beta)
	v, err := multi.Get(ctxA, "SHARED", "d")
	require.NoError(t, err)
	assert.Equal(t, "alpha-shared", v)
	v, err = multi.Get(ctxB, "SHARED", "d")
	require.NoError(t, err)
	assert.Equal(t, "beta-shared", v)
	v, err = multi.Get(ctxA, "BETA_ONLY", "fallback")
	require.NoError(t, err)
	assert.Equal(t, "fallback", v, "a missing key is the caller's default, never another profile's value")

	single := SecretReader{Single: beta}
	v, err = single.Get(t.Context(), "BETA_ONLY", "")
	require.NoError(t, err)
	assert.Equal(t, "b-secret", v)
	v, err = single.Get(ctxA, "BETA_ONLY", "none")
	require.NoError(t, err)
	assert.Equal(t, "none", v, "a bound scope wins over the single-profile fallback")

	for name, s := range map[string]SecretScope{
		"unreadable env file": ResolveSecretScope(cfg, nil, "broken"),
		"unknown profile":     ResolveSecretScope(cfg, nil, "gamma"),
		"load error":          ResolveSecretScope(nil, errors.New("bad"), "alpha"),
		"zero scope":          {},
	} {
		_, err := multi.Get(WithSecretScope(t.Context(), s), "SHARED", "d")
		assert.ErrorIs(t, err, ErrUnscopedSecret, name)
	}
}

func TestCommandEnv(t *testing.T) {
	cfg, _, _ := twoProfiles(t)
	pol, err := ResolveTerminalScope(cfg, nil, "alpha", "/").Policy()
	require.NoError(t, err)
	host := map[string]string{"LANG": "C.UTF-8", "HOME": "/root", "SHARED": "host-value", "AWS_SECRET": "daemon-only"}
	lookup := func(k string) (string, bool) { v, ok := host[k]; return v, ok }

	env, err := CommandEnv(pol, ResolveSecretScope(cfg, nil, "alpha"), lookup)
	require.NoError(t, err)
	assert.Equal(t, []string{"ALPHA_ONLY=a-secret", "LANG=C.UTF-8", "SHARED=alpha-shared"}, env,
		"only passthrough names and the profile's own secrets; nothing of the daemon's environment")

	_, err = CommandEnv(pol, ResolveSecretScope(cfg, nil, "beta"), lookup)
	assert.ErrorIs(t, err, ErrUnscopedSecret, "another profile's secrets are refused")
	_, err = CommandEnv(pol, ResolveSecretScope(cfg, nil, "broken"), lookup)
	assert.ErrorIs(t, err, ErrUnscopedSecret)
}

// TestScopesConcurrentProfiles binds different profiles (and refusals) to
// concurrent calls; run with -race. Each call must see exactly its own
// profile's policy and secrets.
func TestScopesConcurrentProfiles(t *testing.T) {
	cfg, wa, wb := twoProfiles(t)
	reader := SecretReader{Multiplex: true}
	want := map[string]struct{ cwd, secret string }{
		"alpha": {wa, "alpha-shared"},
		"beta":  {wb, "beta-shared"},
	}
	profiles := []string{"alpha", "beta", "gamma", "broken", ""}
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := profiles[i%len(profiles)]
			var ctx context.Context = t.Context()
			if name != "" {
				ctx = BindProfile(ctx, cfg, nil, name, "/")
			}
			pol, perr := TerminalScopeFrom(ctx)
			sec, serr := reader.Get(ctx, "SHARED", "default")
			w, known := want[name]
			switch {
			case known:
				if perr != nil || pol.Profile != name || pol.Cwd != w.cwd {
					errs <- fmt.Errorf("%s: policy %+v %v", name, pol.Profile, perr)
				}
				if serr != nil || sec != w.secret {
					errs <- fmt.Errorf("%s: secret %q %v", name, sec, serr)
				}
			default:
				if !errors.Is(perr, ErrTerminalPolicyUnavailable) {
					errs <- fmt.Errorf("%q: policy not refused: %+v", name, pol)
				}
				if !errors.Is(serr, ErrUnscopedSecret) {
					errs <- fmt.Errorf("%q: secret not refused: %q", name, sec)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestMasker(t *testing.T) {
	cases := []struct {
		name   string
		values []string
		in     string
		want   string
	}{
		{"none", nil, "token abc", "token abc"},
		{"simple", []string{"hunter2"}, "pw=hunter2; again hunter2", "pw=***; again ***"},
		{"longest first", []string{"abc", "abcdef"}, "xabcdefx abcx", "x***x ***x"},
		{"overlapping values", []string{"abcd", "cdef"}, "abcdef", "***ef"},
		{"adjacent", []string{"ab"}, "ababab", "*********"},
		{"empty ignored", []string{"", "s3"}, "as3b", "a***b"},
		{"prefix of other", []string{"secret", "secretive"}, "secretive secret secre", "*** *** secre"},
		{"multibyte", []string{"pässwörd"}, "x pässwörd y", "x *** y"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMasker(tc.values...)
			assert.Equal(t, tc.want, m.Mask(tc.in))
			// Streaming: every way of splitting the input in two chunks,
			// and byte by byte, gives the same result.
			for cut := 0; cut <= len(tc.in); cut++ {
				var out strings.Builder
				w := m.Writer(&out)
				_, err := w.Write([]byte(tc.in[:cut]))
				require.NoError(t, err)
				_, err = w.Write([]byte(tc.in[cut:]))
				require.NoError(t, err)
				require.NoError(t, w.Close())
				assert.Equal(t, tc.want, out.String(), "split at %d", cut)
			}
			var out strings.Builder
			w := m.Writer(&out)
			for i := range len(tc.in) {
				_, err := w.Write([]byte{tc.in[i]})
				require.NoError(t, err)
			}
			require.NoError(t, w.Flush())
			assert.Equal(t, tc.want, out.String(), "byte by byte")
		})
	}
	var nilMasker *Masker
	assert.Equal(t, "x", nilMasker.Mask("x"))
}

func TestMaskerHoldsOnlyPossiblePrefix(t *testing.T) {
	var out strings.Builder
	w := NewMasker("hunter2").Writer(&out)
	_, err := w.Write([]byte("line one\nhun"))
	require.NoError(t, err)
	assert.Equal(t, "line one\n", out.String(), "only a possible secret prefix is held back")
	_, err = w.Write([]byte("ter2 done"))
	require.NoError(t, err)
	assert.Equal(t, "line one\n*** done", out.String())
}

func TestSecretScopeMasker(t *testing.T) {
	m := NewSecretScope("p", map[string]string{"A": "alpha-val", "B": "beta"}).Masker()
	assert.Equal(t, "*** and ***", m.Mask("alpha-val and beta"))
}

func FuzzMasker(f *testing.F) {
	f.Add("abcabc", "abc", "bca", 3)
	f.Add("xx hunter2 yy", "hunter2", "", 5)
	f.Fuzz(func(t *testing.T, in, v1, v2 string, cut int) {
		m := NewMasker(v1, v2)
		want := m.Mask(in)
		if v1 != "" && strings.Contains(want, v1) && !strings.Contains(v1, MaskText) && !strings.Contains(MaskText, v1) {
			// A value may survive only if it is built from mask text and
			// leftovers; require at least that the masked text shrank or
			// the value overlaps the mask.
			if !strings.ContainsAny(v1, "*") {
				t.Fatalf("value %q survives in %q", v1, want)
			}
		}
		if cut < 0 {
			cut = -cut
		}
		if len(in) > 0 {
			cut %= len(in) + 1
		} else {
			cut = 0
		}
		var out strings.Builder
		w := m.Writer(&out)
		_, _ = w.Write([]byte(in[:cut]))
		_, _ = w.Write([]byte(in[cut:]))
		_ = w.Close()
		if out.String() != want {
			t.Fatalf("streamed %q != %q", out.String(), want)
		}
	})
}

func TestProfileSecrets(t *testing.T) {
	cfg, _, _ := twoProfiles(t)
	ps := NewProfileSecrets(cfg)
	assert.Equal(t, "token=*** other=b-secret", ps.Redact("alpha", "token=a-secret other=b-secret"),
		"a profile's redaction masks its own values")
	assert.Equal(t, "*** ***", ps.Redact("beta", "beta-shared b-secret"))
	assert.Equal(t, "a-secret", ps.Redact("broken", "a-secret"), "a profile without loadable secrets has nothing to mask")
	v, err := ps.Secret("beta", "BETA_ONLY")
	require.NoError(t, err)
	assert.Equal(t, "b-secret", v)
	_, err = ps.Secret("alpha", "BETA_ONLY")
	assert.Error(t, err)
	_, err = ps.Secret("broken", "X")
	assert.ErrorIs(t, err, ErrUnscopedSecret)
	_, err = ps.Secret("", "ALPHA_ONLY")
	assert.NoError(t, err, `"" is the default profile`)
}

func BenchmarkMasker(b *testing.B) {
	m := NewMasker("hunter2", "sk-live-0123456789abcdef", "AKIAEXAMPLEKEY", "p4ssw0rd!", "ghp_abcdefghijklmnop")
	line := "2026-11-29 build step ok: compiled 42 packages in 3.1s; token=hunter2 and more text here\n"
	in := strings.Repeat(line, (1<<20)/len(line))
	b.SetBytes(int64(len(in)))
	b.ResetTimer()
	for b.Loop() {
		_ = m.Mask(in)
	}
}
