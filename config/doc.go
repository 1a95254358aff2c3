// Package config loads tether's one YAML configuration file: the profiles
// (terminal policy, secrets, approvals, toolsets, mandate settings), the state
// directory and the UI listener.
//
// Loading is strict. Unknown keys, duplicate keys, values of the wrong type
// and values outside their allowed set are all errors, each reported as
// "file:line: message" so the user can go straight to the problem. A file
// that fails to load changes nothing: callers get no partial configuration.
//
// The file is found through Find: an explicit --config path, then
// $TETHER_CONFIG, then $XDG_CONFIG_HOME/tether/config.yaml (~/.config/… when
// XDG_CONFIG_HOME is unset), then /etc/tether/config.yaml. With none of them
// present, the embedded default (default.yaml) is used. example.yaml
// documents every key.
//
// The package sits before gate 2 of the pipeline (DESIGN.md §1): package
// runner resolves a profile from a loaded Config into the terminal and secret
// scopes bound to each call, and package approval reads a profile's approval
// settings. It needs no privileges; it reads files and the environment only.
package config
