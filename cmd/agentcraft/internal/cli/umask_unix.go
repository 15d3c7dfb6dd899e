//go:build unix

package cli

import "syscall"

// privateFiles makes every file this process creates readable by its
// user only (umask 077, whatever the shell's): the data directory holds
// the database with key hashes and sealed credentials, its WAL, search.db
// and uploads, and several libraries create them (SQLite, River, the
// search engine), some with 0644 before any code of ours could chmod.
func privateFiles() { syscall.Umask(0o077) }
