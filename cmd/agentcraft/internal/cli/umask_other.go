//go:build !unix

package cli

// privateFiles does nothing where there is no umask.
func privateFiles() {}
