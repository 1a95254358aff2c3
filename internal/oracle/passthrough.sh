#!/bin/bash
# An oracle stand-in for sudo, doas and su, which cannot work in a sandbox
# (no setuid under no_new_privs): it drops their options as the real
# program parses them and runs the command, so what they wrap is observed.
name=${0##*/}
cmd=
shell=
# nocmd: an option with which the real program runs no command (it lists,
# validates, edits, prints help or its version); getopt_long reads "--ve"
# as --version, and refuses an ambiguous "--v": neither runs anything.
nocmd=
case $name in
sudo|doas)
	while [ $# -gt 0 ]; do
		case $1 in
		--) shift; break ;;
		-C*) [ "$name" = doas ] && nocmd=1; [ "$1" = -C ] && shift; shift ;; # doas -C: check a config, run nothing
		-u|-g|-D|-h|-p|-r|-t|-U|-T|--user|--group|--close-from|--chdir|--host|--prompt|--role|--type|--other-user|--command-timeout) shift 2 ;;
		--v|--ve*|--he*|--li*|--va*|--ed*|--rem*) nocmd=1; shift ;;
		--*=*) shift ;;
		-s|--shell|-i|--login) shell=1; shift ;;
		-[AbEeHKklnPSVv]*) case $1 in *[lvVKe]*) nocmd=1 ;; esac; case $1 in *s*|*i*) shell=1 ;; esac; shift ;;
		--*) shift ;;
		-*) shift ;;
		*=*) export "$1"; shift ;;
		*) break ;;
		esac
	done
	[ -n "$nocmd" ] && exit 0
	if [ -n "$shell" ]; then exec /bin/bash -c "$*"; fi
	[ $# -gt 0 ] && exec "$@"
	exit 0 ;;
su|runuser)
	while [ $# -gt 0 ]; do
		case $1 in
		--h|--he*|--v*) nocmd=1; shift ;;
		-h|-V) nocmd=1; shift ;;
		-c|--command) cmd=$2; shift 2 ;;
		--command=*) cmd=${1#*=}; shift ;;
		-s|--shell|-g|-G|-w|--group|--supp-group|--whitelist-environment) shift 2 ;;
		-) shift ;;
		-*) shift ;;
		*) shift ;;
		esac
	done
	[ -n "$nocmd" ] && exit 0
	[ -n "$cmd" ] && exec /bin/bash -c "$cmd"
	exit 0 ;;
esac
exit 0
