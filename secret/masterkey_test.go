package secret_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/agentcraftlab/agentcraft/secret"
)

func TestLoadMasterKeyFromEnv(t *testing.T) {
	key := newKey(t)
	file := filepath.Join(t.TempDir(), "master.key") // must stay untouched
	for name, value := range map[string]string{
		"hex":          hex.EncodeToString(key),
		"HEX":          strings.ToUpper(hex.EncodeToString(key)),
		"base64":       base64.StdEncoding.EncodeToString(key),
		"raw base64":   base64.RawStdEncoding.EncodeToString(key),
		"url base64":   base64.URLEncoding.EncodeToString(key),
		"with newline": base64.StdEncoding.EncodeToString(key) + "\n",
		"with spaces":  "  " + hex.EncodeToString(key) + " ",
	} {
		got, err := secret.LoadMasterKey(value, file)
		if err != nil {
			t.Errorf("LoadMasterKey(%s) = %v", name, err)
			continue
		}
		if !bytes.Equal(got, key) {
			t.Errorf("LoadMasterKey(%s) returned another key", name)
		}
	}
	if _, err := os.Stat(file); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("key file with the env var set: %v, want not created", err)
	}
}

func TestLoadMasterKeyBadEnv(t *testing.T) {
	short := base64.StdEncoding.EncodeToString(make([]byte, 16))
	for name, value := range map[string]string{
		"too short":    short,
		"too long hex": hex.EncodeToString(make([]byte, 33)),
		"not encoded":  "correct horse battery staple",
		"64 non-hex":   strings.Repeat("z", 64),
		"password-ish": "hunter2",
	} {
		_, err := secret.LoadMasterKey(value, filepath.Join(t.TempDir(), "k"))
		if err == nil {
			t.Errorf("LoadMasterKey(%s) = nil error", name)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, secret.EnvMasterKey) || !strings.Contains(msg, "32-byte") {
			t.Errorf("LoadMasterKey(%s) error %q does not name the variable and the expected size", name, msg)
		}
		if strings.Contains(msg, value) {
			t.Errorf("LoadMasterKey(%s) error %q repeats the value", name, msg)
		}
	}
}

func TestLoadMasterKeyCreatesAndReusesFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "keys")
	file := filepath.Join(dir, "master.key")
	key, err := secret.LoadMasterKey("", file)
	if err != nil {
		t.Fatalf("LoadMasterKey(new file) = %v", err)
	}
	if len(key) != secret.KeySize || bytes.Equal(key, make([]byte, secret.KeySize)) {
		t.Fatalf("created key = %d bytes (all zero: %v), want 32 random bytes", len(key), bytes.Equal(key, make([]byte, secret.KeySize)))
	}
	info, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		if perm := info.Mode().Perm(); perm != 0o600 {
			t.Errorf("key file mode = %04o, want 0600", perm)
		}
		dinfo, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if perm := dinfo.Mode().Perm(); perm != 0o700 {
			t.Errorf("key directory mode = %04o, want 0700", perm)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("key directory holds %d entries, want only the key file (temporary file left?)", len(entries))
	}

	again, err := secret.LoadMasterKey("", file)
	if err != nil {
		t.Fatalf("LoadMasterKey(existing file) = %v", err)
	}
	if !bytes.Equal(again, key) {
		t.Error("second LoadMasterKey returned another key: the file was not reused")
	}
	// The file is plain base64, so it can be moved into the env var.
	data, _ := os.ReadFile(file)
	fromEnv, err := secret.LoadMasterKey(string(data), "")
	if err != nil || !bytes.Equal(fromEnv, key) {
		t.Errorf("key file content as %s = %v; want the same key", secret.EnvMasterKey, err)
	}
}

func TestLoadMasterKeyConcurrentFirstStart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "master.key")
	const n = 8
	var (
		wg   sync.WaitGroup
		keys [n][]byte
		errs [n]error
	)
	for i := range n {
		wg.Go(func() { keys[i], errs[i] = secret.LoadMasterKey("", file) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("LoadMasterKey #%d = %v", i, errs[i])
		}
		if !bytes.Equal(keys[i], keys[0]) {
			t.Errorf("LoadMasterKey #%d returned another key than #0: concurrent first starts disagree", i)
		}
	}
}

func TestLoadMasterKeyFileFormats(t *testing.T) {
	key := newKey(t)
	for name, content := range map[string][]byte{
		"raw bytes": key,
		"hex":       []byte(hex.EncodeToString(key) + "\n"),
		"base64":    []byte(base64.StdEncoding.EncodeToString(key)),
	} {
		file := filepath.Join(t.TempDir(), "k")
		if err := os.WriteFile(file, content, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := secret.LoadMasterKey("", file)
		if err != nil || !bytes.Equal(got, key) {
			t.Errorf("LoadMasterKey(%s file) = %v, want the key", name, err)
		}
	}
	file := filepath.Join(t.TempDir(), "k")
	if err := os.WriteFile(file, []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := secret.LoadMasterKey("", file); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("LoadMasterKey(garbage file) = %v, want an error naming the file", err)
	}
}

func TestLoadMasterKeyRefusesReadableFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permission bits on Windows")
	}
	file := filepath.Join(t.TempDir(), "master.key")
	if _, err := secret.LoadMasterKey("", file); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []os.FileMode{0o640, 0o604, 0o644, 0o666} {
		if err := os.Chmod(file, mode); err != nil {
			t.Fatal(err)
		}
		_, err := secret.LoadMasterKey("", file)
		if err == nil {
			t.Errorf("LoadMasterKey(file mode %04o) = nil error, want a refusal", mode)
			continue
		}
		if !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("LoadMasterKey(file mode %04o) error %q does not say how to fix it", mode, err)
		}
	}
	if err := os.Chmod(file, 0o400); err != nil {
		t.Fatal(err)
	}
	if _, err := secret.LoadMasterKey("", file); err != nil {
		t.Errorf("LoadMasterKey(file mode 0400) = %v, want the key", err)
	}
}

func TestLoadMasterKeyErrors(t *testing.T) {
	if _, err := secret.LoadMasterKey("", ""); err == nil || !strings.Contains(err.Error(), secret.EnvMasterKey) {
		t.Errorf("LoadMasterKey(no env, no file) = %v, want an error naming %s", err, secret.EnvMasterKey)
	}
	if _, err := secret.LoadMasterKey("", t.TempDir()); err == nil {
		t.Error("LoadMasterKey(a directory) = nil error")
	}
}
