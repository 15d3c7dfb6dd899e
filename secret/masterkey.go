package secret

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// EnvMasterKey is the environment variable LoadMasterKey's callers read.
const EnvMasterKey = "AGENTCRAFT_MASTER_KEY"

// LoadMasterKey returns the master key. envValue is the value of
// AGENTCRAFT_MASTER_KEY: when it is set it wins, and must be 32 bytes as 64
// hex or 44 base64 characters. Otherwise the key is read from keyFile;
// when keyFile does not exist it is created with a new random key (mode
// 0600, in a directory created 0700) and that key is returned, so the
// first start needs no setup. A key file that group or others may read is
// refused. Errors never contain key material.
func LoadMasterKey(envValue, keyFile string) ([]byte, error) {
	if v := strings.TrimSpace(envValue); v != "" {
		key, err := parseKey(v)
		if err != nil {
			return nil, fmt.Errorf("secret: %s: %w", EnvMasterKey, err)
		}
		return key, nil
	}
	if keyFile == "" {
		return nil, fmt.Errorf("secret: no master key: set %s or a key file path", EnvMasterKey)
	}
	key, err := readKeyFile(keyFile)
	if errors.Is(err, fs.ErrNotExist) {
		return createKeyFile(keyFile)
	}
	return key, err
}

// ReadMasterKey is LoadMasterKey without creating a missing key file:
// for commands such as backup that must copy the key in use, never make
// one. A missing file is an error satisfying errors.Is(err,
// fs.ErrNotExist).
func ReadMasterKey(envValue, keyFile string) ([]byte, error) {
	if strings.TrimSpace(envValue) != "" {
		return LoadMasterKey(envValue, "")
	}
	if keyFile == "" {
		return nil, fmt.Errorf("secret: no master key: set %s or a key file path", EnvMasterKey)
	}
	return readKeyFile(keyFile)
}

// parseKey decodes a key written as text. The message says what was
// expected and how long the value was, never the value.
func parseKey(s string) ([]byte, error) {
	if len(s) == hex.EncodedLen(KeySize) {
		if key, err := hex.DecodeString(s); err == nil {
			return key, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if key, err := enc.DecodeString(s); err == nil && len(key) == KeySize {
			return key, nil
		}
	}
	return nil, fmt.Errorf("not a %d-byte key: want %d hex or %d base64 characters, got %d characters (generate one with: openssl rand -base64 32)",
		KeySize, hex.EncodedLen(KeySize), base64.StdEncoding.EncodedLen(KeySize), len(s))
}

// readKeyFile reads a key file written by createKeyFile (base64 text), or
// one holding hex text or the 32 raw bytes.
func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("secret: key file: %w", err) // callers test fs.ErrNotExist
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("secret: key file: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("secret: key file %s is not a regular file", path)
	}
	// Windows has no Unix permission bits; its ACLs are the user's to set.
	if perm := info.Mode().Perm(); runtime.GOOS != "windows" && perm&0o077 != 0 {
		return nil, fmt.Errorf("secret: key file %s can be read by other users (mode %04o); restrict it with: chmod 600 %s", path, perm, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, 1024))
	if err != nil {
		return nil, fmt.Errorf("secret: read key file %s: %w", path, err)
	}
	if len(data) == KeySize {
		return data, nil
	}
	key, err := parseKey(strings.TrimSpace(string(data)))
	if err != nil {
		return nil, fmt.Errorf("secret: key file %s: %w", path, err)
	}
	return key, nil
}

// createKeyFile writes a new random key to path and returns it. The key is
// written to a temporary file that is then hard-linked into place, which
// fails if path exists: two processes starting together never overwrite
// each other's key, and no reader ever sees a half-written file. The loser
// of such a race reads the winner's key.
func createKeyFile(path string) ([]byte, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("secret: create key directory: %w", err)
	}
	key := make([]byte, KeySize)
	rand.Read(key) // never fails since Go 1.24

	tmp, err := os.CreateTemp(dir, ".master-key-*") // mode 0600
	if err != nil {
		return nil, fmt.Errorf("secret: create key file: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("secret: write key file: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readKeyFile(path)
		}
		return nil, fmt.Errorf("secret: create key file: %w", err)
	}
	return key, nil
}
