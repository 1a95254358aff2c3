package config

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// LoadSecrets returns the profile's secrets: the env file's entries
// overlaid with the named values. An unreadable or malformed env file is an
// error (never an empty mapping), so a caller binding secrets fails closed.
func (s Secrets) LoadSecrets() (map[string]string, error) {
	out := map[string]string{}
	if s.EnvFile != "" {
		data, err := ReadTrusted(s.EnvFile, "secrets env file", MaxSecretsSize)
		if err != nil {
			return nil, err
		}
		if err := parseEnvFile(s.EnvFile, data, out); err != nil {
			return nil, err
		}
	}
	maps.Copy(out, s.Values)
	return out, nil
}

// parseEnvFile reads NAME=VALUE lines into out.
func parseEnvFile(name string, data []byte, out map[string]string) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		text = strings.TrimPrefix(text, "export ")
		k, v, ok := strings.Cut(text, "=")
		k = strings.TrimSpace(k)
		if !ok || !envNamePatern().MatchString(k) {
			// The line is not echoed: it may hold a secret.
			return fmt.Errorf("%s:%d: want NAME=VALUE", name, line)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		out[k] = v
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	return nil
}

// CheckSecrets loads every profile's secrets and reports those that cannot
// be loaded (a missing or malformed env file): such a profile's calls are
// refused at run time, so `tether config check` reports it now.
func (c *Config) CheckSecrets() []Problem {
	var out []Problem
	for _, name := range slices.Sorted(maps.Keys(c.Profiles)) {
		p := c.Profiles[name]
		if _, err := p.Secrets.LoadSecrets(); err != nil {
			out = append(out, Problem{File: c.Source, Line: p.Secrets.envFileLine,
				Msg: fmt.Sprintf("profile %s: %v", name, err)})
		}
	}
	return out
}

// Masked returns a deep copy of c with every secret value replaced by
// "***", for display.
func (c *Config) Masked() *Config {
	out := *c
	out.Profiles = make(map[string]*Profile, len(c.Profiles))
	for name, p := range c.Profiles {
		cp := *p
		if p.Secrets.Values != nil {
			cp.Secrets.Values = make(map[string]string, len(p.Secrets.Values))
			for k := range p.Secrets.Values {
				cp.Secrets.Values[k] = "***"
			}
		}
		out.Profiles[name] = &cp
	}
	return &out
}
