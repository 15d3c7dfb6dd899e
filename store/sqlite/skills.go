package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/agentcraftlab/agentcraft/store"
)

const skillColumns = `workspace_id, name, description, instructions, license, compatibility, allowed_tools, metadata, created_at, updated_at`

func scanSkill(sc scanner) (store.Skill, error) {
	var (
		s                store.Skill
		meta             sql.NullString
		created, updated int64
	)
	if err := sc.Scan(&s.WorkspaceID, &s.Name, &s.Description, &s.Instructions, &s.License, &s.Compatibility, &s.AllowedTools,
		&meta, &created, &updated); err != nil {
		return store.Skill{}, err
	}
	if meta.Valid && meta.String != "" {
		if err := json.Unmarshal([]byte(meta.String), &s.Metadata); err != nil {
			return store.Skill{}, fmt.Errorf("decode metadata of skill %q: %w", s.Name, err)
		}
	}
	s.CreatedAt, s.UpdatedAt = fromMicros(created), fromMicros(updated)
	return s, nil
}

func insertSkillFiles(ctx context.Context, tx *sql.Tx, s store.Skill) error {
	for _, f := range s.Files {
		if _, err := tx.ExecContext(ctx, `INSERT INTO skill_files (workspace_id, skill, path, size, data) VALUES (?, ?, ?, ?, ?)`,
			s.WorkspaceID, s.Name, f.Path, f.Size, f.Data); err != nil {
			return err
		}
	}
	return nil
}

func (d driver) SkillInsert(ctx context.Context, p *store.SkillWriteParams) error {
	s := p.Skill
	err := d.s.writeTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO skills (`+skillColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			s.WorkspaceID, s.Name, s.Description, s.Instructions, s.License, s.Compatibility, s.AllowedTools,
			nullJSON(p.Metadata), micros(s.CreatedAt), micros(s.UpdatedAt)); err != nil {
			return err
		}
		return insertSkillFiles(ctx, tx, s)
	})
	return mapErr(err)
}

// SkillGet reads the row and its files in one read transaction, so that
// an update between the two reads cannot pair the old row with new files.
func (d driver) SkillGet(ctx context.Context, workspaceID, name string) (store.Skill, error) {
	tx, err := d.s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return store.Skill{}, err
	}
	defer tx.Rollback()
	s, err := scanSkill(tx.QueryRowContext(ctx, `SELECT `+skillColumns+` FROM skills WHERE workspace_id = ? AND name = ?`, workspaceID, name))
	if err != nil {
		return store.Skill{}, mapErr(err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT path, size FROM skill_files WHERE workspace_id = ? AND skill = ? ORDER BY path`, workspaceID, name)
	if err != nil {
		return store.Skill{}, err
	}
	defer rows.Close()
	s.Files = []store.SkillFile{}
	for rows.Next() {
		var f store.SkillFile
		if err := rows.Scan(&f.Path, &f.Size); err != nil {
			return store.Skill{}, err
		}
		s.Files = append(s.Files, f)
	}
	return s, rows.Err()
}

func (d driver) SkillList(ctx context.Context, workspaceID string) ([]store.Skill, error) {
	return queryList(ctx, d.s.reader, scanSkill,
		`SELECT `+skillColumns+` FROM skills WHERE workspace_id = ? ORDER BY name`, workspaceID)
}

func (d driver) SkillUpdate(ctx context.Context, p *store.SkillWriteParams) error {
	s := p.Skill
	err := d.s.writeTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`UPDATE skills SET description = ?, instructions = ?, license = ?, compatibility = ?, allowed_tools = ?,
				metadata = ?, updated_at = ? WHERE workspace_id = ? AND name = ?`,
			s.Description, s.Instructions, s.License, s.Compatibility, s.AllowedTools, nullJSON(p.Metadata), micros(s.UpdatedAt),
			s.WorkspaceID, s.Name)
		if err == nil {
			err = rowsAffected(res)
		}
		if err != nil || s.Files == nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM skill_files WHERE workspace_id = ? AND skill = ?`, s.WorkspaceID, s.Name); err != nil {
			return err
		}
		return insertSkillFiles(ctx, tx, s)
	})
	return mapErr(err)
}

func (d driver) SkillFileGet(ctx context.Context, workspaceID, name, path string) (store.SkillFile, error) {
	f := store.SkillFile{Path: path}
	err := d.s.reader.QueryRowContext(ctx, `SELECT size, data FROM skill_files WHERE workspace_id = ? AND skill = ? AND path = ?`,
		workspaceID, name, path).Scan(&f.Size, &f.Data)
	if err != nil {
		return store.SkillFile{}, mapErr(err)
	}
	if f.Data == nil {
		f.Data = []byte{}
	}
	return f, nil
}

func (d driver) SkillDelete(ctx context.Context, workspaceID, name string) error {
	res, err := d.s.writer.ExecContext(ctx, `DELETE FROM skills WHERE workspace_id = ? AND name = ?`, workspaceID, name)
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}
