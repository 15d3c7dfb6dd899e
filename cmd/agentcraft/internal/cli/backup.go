package cli

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentcraftlab/agentcraft/internal/database"
	"github.com/agentcraftlab/agentcraft/secret"
)

// Backup and restore
//
// `agentcraft backup FILE` copies a SQLite database with VACUUM INTO on a
// connection of its own: one consistent snapshot, taken while serve keeps
// running (it takes no lock: see lock.go), written under a temporary name
// and moved into place. The master key is not in the copy: the database
// holds credentials sealed with it, and a backup that carries its own key
// is a backup anyone who finds it can decrypt. With --with-master-key the
// key is written beside it as FILE.key (mode 0600), to be stored apart.
//
// `agentcraft restore FILE` puts such a copy into an empty data directory
// (the directory of database.url) after checking that it is an intact
// AgentCraft database, takes FILE.key along when it is there and no key
// is configured yet, and migrates the copy forward.

// keySuffix names the master key file written beside a backup.
const keySuffix = ".key"

func backupCmd(e *env) *cobra.Command {
	var withKey, force bool
	c := &cobra.Command{
		Use:   "backup FILE",
		Short: "Copy the database consistently into FILE while serve runs (SQLite: VACUUM INTO; PostgreSQL: pg_dump)",
		Long: "Writes a consistent copy of the SQLite database to FILE (mode 0600) without stopping serve. FILE must\n" +
			"not exist unless --force. The master key that seals stored credentials is NOT in the copy; with\n" +
			"--with-master-key it is written to FILE.key (mode 0600): keep that file apart from the backup, since\n" +
			"the two together decrypt every stored credential. On PostgreSQL it runs pg_dump --format=custom\n" +
			"when pg_dump is on PATH, and otherwise prints the command to run.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := e.load()
			if err != nil {
				return err
			}
			u, err := parseDatabase(cfg.Database.URL)
			if err != nil {
				return err
			}
			dst := args[0]
			if !force {
				for _, p := range []string{dst, dst + keySuffix} {
					if _, err := os.Lstat(p); err == nil && (p == dst || withKey) {
						return fmt.Errorf("backup: %s exists; choose a new file name or pass --force to replace it", p)
					}
				}
			}
			switch {
			case u.Kind == database.Postgres:
				if err := pgDump(cmd.Context(), e, u, dst); err != nil {
					return err
				}
			case u.Path == database.MemoryPath:
				return errors.New("backup: database.url is sqlite://:memory:, which lives only inside its process")
			default:
				n, err := database.Backup(cmd.Context(), u.Path, dst, force)
				if errors.Is(err, database.ErrBackupExists) {
					return fmt.Errorf("backup: %s exists; choose a new file name or pass --force to replace it", dst)
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "backed up %s to %s (%s)\n", u, dst, humanBytes(n))
			}
			if !withKey {
				fmt.Fprintln(e.stdout, "the master key is not in the backup: keep a copy of "+keySource(cfg.Secrets.MasterKeyFile)+
					" somewhere else, or stored credentials cannot be decrypted after a restore (--with-master-key writes it to FILE"+keySuffix+")")
				return nil
			}
			key, err := secret.ReadMasterKey(os.Getenv(secret.EnvMasterKey), cfg.Secrets.MasterKeyFile)
			if err != nil {
				return fmt.Errorf("backup: the database is copied, but not the master key: %w", err)
			}
			if err := writePrivate(dst+keySuffix, []byte(base64.StdEncoding.EncodeToString(key)+"\n"), force); err != nil {
				return fmt.Errorf("backup: write master key: %w", err)
			}
			fmt.Fprintf(e.stdout, "master key written to %s (mode 0600): store it apart from the backup\n", dst+keySuffix)
			return nil
		},
	}
	c.Flags().BoolVar(&withKey, "with-master-key", false, "also write the master key to FILE.key (mode 0600)")
	c.Flags().BoolVar(&force, "force", false, "replace FILE (and FILE.key) if they exist")
	return c
}

func keySource(file string) string {
	if os.Getenv(secret.EnvMasterKey) != "" {
		return secret.EnvMasterKey
	}
	return file
}

// pgDumpRecipe is the documented PostgreSQL backup (README, "Backup and
// restore").
func pgDumpRecipe(dst string) string {
	return "pg_dump --format=custom --no-owner --file " + dst + " \"$DATABASE_URL\""
}

// pgDump runs pg_dump when it is on PATH, else says how to.
func pgDump(ctx context.Context, e *env, u database.URL, dst string) error {
	bin, err := exec.LookPath("pg_dump")
	if err != nil {
		return fmt.Errorf("backup: pg_dump is not on PATH; on PostgreSQL back up with:\n  DATABASE_URL='%s' %s\nand restore into an empty database with:\n  pg_restore --no-owner --dbname \"$DATABASE_URL\" %s",
			u, pgDumpRecipe(dst), dst)
	}
	c := exec.CommandContext(ctx, bin, "--format=custom", "--no-owner", "--file", dst, u.DSN)
	c.Stdout, c.Stderr = e.stdout, e.stderr
	if err := c.Run(); err != nil {
		return fmt.Errorf("backup: pg_dump: %w", err)
	}
	if err := os.Chmod(dst, 0o600); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	fmt.Fprintf(e.stdout, "backed up %s to %s with pg_dump (custom format; restore with pg_restore)\n", u, dst)
	return nil
}

// writePrivate writes data to path with mode 0600 through a temporary
// file, replacing path only when replace.
func writePrivate(path string, data []byte, replace bool) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*") // 0600
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if replace {
		return os.Rename(tmp, path)
	}
	return os.Link(tmp, path)
}

func restoreCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "restore FILE",
		Short: "Put a backup into an empty data directory, check it, and migrate it forward",
		Long: "Restores a SQLite backup made by `agentcraft backup` to database.url, whose directory must be empty\n" +
			"or missing (a directory with anything in it is refused, so a restore never replaces live data).\n" +
			"FILE must pass SQLite's integrity check and be an AgentCraft database. When FILE.key is beside it and\n" +
			"no master key is configured yet, it becomes secrets.master_key_file. The database is then migrated to\n" +
			"this version.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := e.load()
			if err != nil {
				return err
			}
			u, err := parseDatabase(cfg.Database.URL)
			if err != nil {
				return err
			}
			if u.Kind != database.SQLite || u.Path == database.MemoryPath {
				return fmt.Errorf("restore: database.url must name a SQLite file; on PostgreSQL restore a pg_dump file with:\n  pg_restore --no-owner --dbname \"$DATABASE_URL\" %s", args[0])
			}
			src := args[0]
			dst, err := filepath.Abs(u.Path)
			if err != nil {
				return err
			}
			dir := filepath.Dir(dst)
			if err := emptyDir(dir); err != nil {
				return err
			}
			version, err := checkBackup(cmd.Context(), src)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return fmt.Errorf("restore: %w", err)
			}
			if err := copyPrivate(src, dst); err != nil {
				return fmt.Errorf("restore: %w", err)
			}
			fmt.Fprintf(e.stdout, "restored %s (schema version %d) to %s\n", src, version, dst)
			o, err := openDatabase(cmd.Context(), u, newLogger(e.stderr, cfg.Log))
			if err != nil {
				// Leave the directory as it was: the backup is untouched and
				// a corrected binary can restore it again.
				for _, suffix := range []string{"", "-wal", "-shm"} {
					os.Remove(dst + suffix)
				}
				return fmt.Errorf("restore: the copy does not open or migrate, so it was removed again (%s is untouched): %w", src, err)
			}
			defer o.close()
			if o.applied > 0 {
				fmt.Fprintf(e.stdout, "migrated forward: %d %s applied\n", o.applied, plural(int(o.applied), "migration", "migrations"))
			}
			return restoreKey(e, src, cfg.Secrets.MasterKeyFile)
		},
	}
}

// emptyDir refuses a directory that exists and holds anything.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if len(entries) == 0 {
		return nil
	}
	names := make([]string, 0, 3)
	for _, en := range entries[:min(3, len(entries))] {
		names = append(names, en.Name())
	}
	more := ""
	if len(entries) > 3 {
		more = fmt.Sprintf(" and %d more", len(entries)-3)
	}
	return fmt.Errorf("restore: the data directory %s is not empty (it holds %s%s): a restore never replaces data; "+
		"move that directory away, or point database.url at a new directory (--config or AGENTCRAFT_DATABASE_URL)", dir, strings.Join(names, ", "), more)
}

// checkBackup verifies that path is an intact AgentCraft SQLite database
// and returns its schema version.
func checkBackup(ctx context.Context, path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("restore: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("restore: %s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("restore: %w", err)
	}
	header := make([]byte, 16)
	_, err = io.ReadFull(f, header)
	f.Close()
	if err != nil || string(header) != "SQLite format 3\x00" {
		return 0, fmt.Errorf("restore: %s is not a SQLite database (a backup is the file `agentcraft backup` wrote; a PostgreSQL dump is restored with pg_restore)", path)
	}
	if err := database.Check(ctx, path); err != nil {
		return 0, fmt.Errorf("restore: %s is damaged: %w", path, err)
	}
	db, err := database.OpenReadOnly(path)
	if err != nil {
		return 0, fmt.Errorf("restore: %w", err)
	}
	defer db.Close()
	var version int64
	err = db.QueryRowContext(ctx, `SELECT coalesce(max(version_id), 0) FROM goose_db_version WHERE is_applied`).Scan(&version)
	if err != nil || version < 1 {
		return 0, fmt.Errorf("restore: %s is a SQLite database but not AgentCraft's (it has no AgentCraft schema version)", path)
	}
	var tables int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN ('workspaces', 'api_keys', 'usage_records')`).Scan(&tables); err != nil || tables != 3 {
		return 0, fmt.Errorf("restore: %s is a SQLite database but not AgentCraft's (its tables are missing)", path)
	}
	return version, nil
}

// copyPrivate copies src to dst (mode 0600) through a temporary file in
// dst's directory, never replacing dst.
func copyPrivate(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	f, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".restore-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = io.Copy(f, in)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Link(tmp, dst)
}

// restoreKey installs src+".key" as the master key file when there is
// one and neither a key file nor AGENTCRAFT_MASTER_KEY is in place.
func restoreKey(e *env, src, keyFile string) error {
	keyBackup := src + keySuffix
	data, err := os.ReadFile(keyBackup)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(e.stdout, "no %s beside the backup: stored credentials need the original master key (%s or %s)\n",
			filepath.Base(keyBackup), secret.EnvMasterKey, keyFile)
		return nil
	case err != nil:
		return fmt.Errorf("restore: %w", err)
	case os.Getenv(secret.EnvMasterKey) != "":
		fmt.Fprintf(e.stdout, "%s is set: %s was not installed\n", secret.EnvMasterKey, keyBackup)
		return nil
	}
	if _, err := os.Stat(keyFile); err == nil {
		fmt.Fprintf(e.stdout, "%s exists: %s was not installed\n", keyFile, keyBackup)
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(keyFile), 0o700); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := writePrivate(keyFile, data, false); err != nil {
		return fmt.Errorf("restore: install master key: %w", err)
	}
	if _, err := secret.ReadMasterKey("", keyFile); err != nil {
		os.Remove(keyFile)
		return fmt.Errorf("restore: %s is not a master key: %w", keyBackup, err)
	}
	fmt.Fprintf(e.stdout, "master key installed as %s\n", keyFile)
	return nil
}
