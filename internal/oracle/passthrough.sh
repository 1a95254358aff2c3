#!/bin/bash
# An oracle stand-in for sudo, doas and su, which cannot work in a sandbox
# (no setuid under no_new_privs): it drops their options as the real
# program parses them and runs the command, so what they wrap is observed.
name=${0##*/}
cmd=
shell=
case $name in
sudo|doas)
	while [ $# -gt 0 ]; do
		case $1 in
		--) shift; break ;;
		-u|-g|-C|-D|-h|-p|-r|-t|-U|-T|--user|--group|--close-from|--chdir|--host|--prompt|--role|--type|--other-user|--command-timeout) shift 2 ;;
		--*=*) shift ;;
		-s|--shell|-i|--login) shell=1; shift ;;
		-[AbEeHKklnPSVv]*) case $1 in *s*|*i*) shell=1 ;; esac; shift ;;
		--*) shift ;;
		-*) shift ;;
		*=*) export "$1"; shift ;;
		*) break ;;
		esac
	done
	if [ -n "$shell" ]; then exec /bin/bash -c "$*"; fi
	[ $# -gt 0 ] && exec "$@"
	exit 0 ;;
su|runuser)
	while [ $# -gt 0 ]; do
		case $1 in
		-c|--command) cmd=$2; shift 2 ;;
		--command=*) cmd=${1#*=}; shift ;;
		-s|--shell|-g|-G|-w|--group|--supp-group|--whitelist-environment) shift 2 ;;
		-) shift ;;
		-*) shift ;;
		*) shift ;;
		esac
	done
	[ -n "$cmd" ] && exec /bin/bash -c "$cmd"
	exit 0 ;;
esac
exit 0
