package config

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// lineErr returns a decoding error that yaml aggregates with the others,
// carrying the node's line.
func lineErr(n *yaml.Node, format string, args ...any) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %s", n.Line, fmt.Sprintf(format, args...))}}
}

// scalar returns n's value, or an error when n is not a scalar.
func scalar(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", lineErr(n, "%s must be a single value", what)
	}
	return n.Value, nil
}

// Duration is a time.Duration written as "300s", "5m" or a number of
// seconds. Negative durations are errors.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// UnmarshalYAML implements yaml.Unmarshaler.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	s, err := scalar(n, "a duration")
	if err != nil {
		return err
	}
	s = strings.TrimSpace(s)
	if secs, err := strconv.ParseInt(s, 10, 64); err == nil {
		if secs < 0 || secs > math.MaxInt64/int64(time.Second) {
			return lineErr(n, "duration %q is out of range", s)
		}
		*d = Duration(time.Duration(secs) * time.Second)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return lineErr(n, "invalid duration %q (use for example 30s, 5m or a number of seconds)", s)
	}
	if v < 0 {
		return lineErr(n, "duration %q must not be negative", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML implements yaml.Marshaler.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// MarshalJSON writes the duration as a string such as "5m0s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// ByteSize is a size in bytes written as a number or with a unit: "512MiB",
// "1G", "64k" (k/m/g/t and the KB/KiB spellings are all powers of 1024).
type ByteSize int64

// sizeUnit returns the multiplier of a lower-case unit. A switch rather
// than a map, so that nothing is built at init.
func sizeUnit(unit string) (int64, bool) {
	switch unit {
	case "", "b":
		return 1, true
	case "k", "kb", "kib":
		return 1 << 10, true
	case "m", "mb", "mib":
		return 1 << 20, true
	case "g", "gb", "gib":
		return 1 << 30, true
	case "t", "tb", "tib":
		return 1 << 40, true
	}
	return 0, false
}

// ParseByteSize parses a size as written in the config file.
func ParseByteSize(s string) (ByteSize, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	num, unit := s[:i], strings.ToLower(strings.TrimSpace(s[i:]))
	mult, ok := sizeUnit(unit)
	if !ok || num == "" {
		return 0, fmt.Errorf("invalid size %q (use for example 512MiB, 1G or a number of bytes)", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 || f*float64(mult) > float64(math.MaxInt64/2) {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	return ByteSize(f * float64(mult)), nil
}

// String returns the size with the largest binary unit that divides it
// ("512MiB", "1GiB", "100").
func (b ByteSize) String() string {
	for _, u := range []struct {
		name string
		n    int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b != 0 && int64(b)%u.n == 0 {
			return fmt.Sprintf("%d%s", int64(b)/u.n, u.name)
		}
	}
	return strconv.FormatInt(int64(b), 10)
}

// MarshalYAML implements yaml.Marshaler.
func (b ByteSize) MarshalYAML() (any, error) { return b.String(), nil }

// UnmarshalYAML implements yaml.Unmarshaler.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	s, err := scalar(n, "a size")
	if err != nil {
		return err
	}
	v, err := ParseByteSize(s)
	if err != nil {
		return lineErr(n, "%v", err)
	}
	*b = v
	return nil
}

// enum decodes a scalar that must be one of allowed.
func enum(n *yaml.Node, what string, allowed ...string) (string, error) {
	s, err := scalar(n, what)
	if err != nil {
		return "", err
	}
	for _, a := range allowed {
		if s == a {
			return s, nil
		}
	}
	return "", lineErr(n, "invalid %s %q (want one of: %s)", what, s, strings.Join(allowed, ", "))
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (b *Backend) UnmarshalYAML(n *yaml.Node) error {
	s, err := enum(n, "backend", string(BackendSandbox), string(BackendHost))
	*b = Backend(s)
	return err
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (m *NetworkMode) UnmarshalYAML(n *yaml.Node) error {
	s, err := enum(n, "network mode", string(NetworkNone), string(NetworkHost), string(NetworkProxy))
	*m = NetworkMode(s)
	return err
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (m *Mode) UnmarshalYAML(n *yaml.Node) error {
	s, err := enum(n, "approval mode", string(ModeManual), string(ModeSmart), string(ModeOff))
	*m = Mode(s)
	return err
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (u *UnattendedPolicy) UnmarshalYAML(n *yaml.Node) error {
	s, err := enum(n, "unattended policy", string(UnattendedDeny), string(UnattendedApprove))
	*u = UnattendedPolicy(s)
	return err
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (v *Violation) UnmarshalYAML(n *yaml.Node) error {
	s, err := enum(n, "interactive_violation", string(ViolationBlock), string(ViolationApprove))
	*v = Violation(s)
	return err
}
