package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

const skillColumns = `workspace_id, name, description, instructions, license, compatibility, allowed_tools, metadata, created_at, updated_at`

func scanSkill(row pgx.Row) (store.Skill, error) {
	var (
		s    store.Skill
		meta []byte
	)
	if err := row.Scan(&s.WorkspaceID, &s.Name, &s.Description, &s.Instructions, &s.License, &s.Compatibility, &s.AllowedTools,
		&meta, &s.CreatedAt, &s.UpdatedAt); err != nil {
		return store.Skill{}, err
	}
	if len(meta) > 0 {
		if err := json.Unmarshal(meta, &s.Metadata); err != nil {
			return store.Skill{}, fmt.Errorf("decode metadata of skill %q: %w", s.Name, err)
		}
	}
	s.CreatedAt, s.UpdatedAt = s.CreatedAt.UTC(), s.UpdatedAt.UTC()
	return s, nil
}

func insertSkillFiles(ctx context.Context, tx pgx.Tx, s store.Skill) error {
	for _, f := range s.Files {
		if _, err := tx.Exec(ctx, `INSERT INTO skill_files (workspace_id, skill, path, size, data) VALUES ($1, $2, $3, $4, $5)`,
			s.WorkspaceID, s.Name, f.Path, f.Size, f.Data); err != nil {
			return err
		}
	}
	return nil
}

func (d driver) SkillInsert(ctx context.Context, p *store.SkillWriteParams) error {
	s := p.Skill
	err := pgx.BeginFunc(ctx, d.s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO skills (`+skillColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			s.WorkspaceID, s.Name, s.Description, s.Instructions, s.License, s.Compatibility, s.AllowedTools,
			nullJSON(p.Metadata), s.CreatedAt, s.UpdatedAt); err != nil {
			return err
		}
		return insertSkillFiles(ctx, tx, s)
	})
	return mapErr(err)
}

// SkillGet reads the row and its files in one repeatable-read
// transaction, so that an update between the two reads cannot pair the
// old row with new files.
func (d driver) SkillGet(ctx context.Context, workspaceID, name string) (store.Skill, error) {
	var s store.Skill
	err := pgx.BeginTxFunc(ctx, d.s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		s, err = scanSkill(tx.QueryRow(ctx, `SELECT `+skillColumns+` FROM skills WHERE workspace_id = $1 AND name = $2`, workspaceID, name))
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT path, size FROM skill_files WHERE workspace_id = $1 AND skill = $2 ORDER BY path COLLATE "C"`, workspaceID, name)
		if err != nil {
			return err
		}
		defer rows.Close()
		s.Files = []store.SkillFile{}
		for rows.Next() {
			var f store.SkillFile
			if err := rows.Scan(&f.Path, &f.Size); err != nil {
				return err
			}
			s.Files = append(s.Files, f)
		}
		return rows.Err()
	})
	if err != nil {
		return store.Skill{}, mapErr(err)
	}
	return s, nil
}

func (d driver) SkillList(ctx context.Context, workspaceID string) ([]store.Skill, error) {
	return queryList(ctx, d.s, scanSkill,
		`SELECT `+skillColumns+` FROM skills WHERE workspace_id = $1 ORDER BY name COLLATE "C"`, workspaceID)
}

func (d driver) SkillUpdate(ctx context.Context, p *store.SkillWriteParams) error {
	s := p.Skill
	err := pgx.BeginFunc(ctx, d.s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx,
			`UPDATE skills SET description = $1, instructions = $2, license = $3, compatibility = $4, allowed_tools = $5,
				metadata = $6, updated_at = $7 WHERE workspace_id = $8 AND name = $9`,
			s.Description, s.Instructions, s.License, s.Compatibility, s.AllowedTools, nullJSON(p.Metadata), s.UpdatedAt,
			s.WorkspaceID, s.Name)
		if err == nil {
			err = affected(tag)
		}
		if err != nil || s.Files == nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM skill_files WHERE workspace_id = $1 AND skill = $2`, s.WorkspaceID, s.Name); err != nil {
			return err
		}
		return insertSkillFiles(ctx, tx, s)
	})
	return mapErr(err)
}

func (d driver) SkillFileGet(ctx context.Context, workspaceID, name, path string) (store.SkillFile, error) {
	f := store.SkillFile{Path: path}
	err := d.s.pool.QueryRow(ctx, `SELECT size, data FROM skill_files WHERE workspace_id = $1 AND skill = $2 AND path = $3`,
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
	tag, err := d.s.pool.Exec(ctx, `DELETE FROM skills WHERE workspace_id = $1 AND name = $2`, workspaceID, name)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}
