package server

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/skill"
)

// registerSkills adds /api/skills: the built-in skills and the
// workspace's own. Reading needs read, changing edit, as for agents,
// which name skills.
func (s *Server) registerSkills() {
	s.handle("GET /api/skills", identity.PermRead, s.listSkills)
	s.handle("POST /api/skills", identity.PermEdit, s.createSkill)
	s.handle("POST /api/skills/import", identity.PermEdit, s.importSkill)
	s.handle("GET /api/skills/{name}", identity.PermRead, s.getSkill)
	s.handle("GET /api/skills/{name}/files/{path...}", identity.PermRead, s.getSkillFile)
	s.handle("PUT /api/skills/{name}", identity.PermEdit, s.updateSkill)
	s.handle("DELETE /api/skills/{name}", identity.PermEdit, s.deleteSkill)
}

// skillBody is a skill in the API: the front matter fields of its
// SKILL.md (allowed-tools as allowed_tools), its instructions and its
// resource files. On PUT, files left out keep the stored ones.
type skillBody struct {
	Name          string            `json:"name"`
	Description   string            `json:"description"`
	Instructions  string            `json:"instructions"`
	License       string            `json:"license"`
	Compatibility string            `json:"compatibility"`
	AllowedTools  string            `json:"allowed_tools"`
	Metadata      map[string]string `json:"metadata"`
	Files         *[]skillFileBody  `json:"files"`
}

// skillFileBody is one resource file: text as content, anything else as
// content_base64.
type skillFileBody struct {
	Path          string  `json:"path"`
	Content       *string `json:"content,omitempty"`
	ContentBase64 *string `json:"content_base64,omitempty"`
}

// skill is the skill the body defines; an error is a 400 naming the field.
func (b skillBody) skill() (skill.Skill, *apierr.Error) {
	sk := skill.Skill{Name: strings.TrimSpace(b.Name), Description: strings.TrimSpace(b.Description), Instructions: b.Instructions,
		License: strings.TrimSpace(b.License), Compatibility: strings.TrimSpace(b.Compatibility), AllowedTools: strings.TrimSpace(b.AllowedTools),
		Metadata: b.Metadata}
	if b.Files == nil {
		return sk, nil
	}
	sk.Files = make([]skill.File, 0, len(*b.Files))
	for i, f := range *b.Files {
		param := fmt.Sprintf("files[%d]", i)
		var data []byte
		switch {
		case f.Content != nil && f.ContentBase64 != nil:
			return skill.Skill{}, apierr.BadRequest(param, param+": set content (text) or content_base64, not both")
		case f.Content != nil:
			data = []byte(*f.Content)
		case f.ContentBase64 != nil:
			d, err := base64.StdEncoding.DecodeString(*f.ContentBase64)
			if err != nil {
				return skill.Skill{}, apierr.BadRequest(param+".content_base64", param+".content_base64 is not standard base64: "+err.Error())
			}
			data = d
		default:
			return skill.Skill{}, apierr.BadRequest(param, param+": set content (text) or content_base64")
		}
		sk.Files = append(sk.Files, skill.File{Path: f.Path, Size: int64(len(data)), Data: data})
	}
	return sk, nil
}

// skillAPIError is the API error of a skill operation.
func skillAPIError(err error) *apierr.Error {
	msg := strings.TrimPrefix(err.Error(), "skill: ")
	var fe *skill.FieldError
	switch {
	case errors.As(err, &fe):
		return apierr.BadRequest(skillParam(fe.Field), fe.Field+": "+fe.Message)
	case errors.Is(err, skill.ErrNotFound):
		return apierr.NotFound("skill_not_found", msg+" (GET /api/skills lists them)")
	case errors.Is(err, skill.ErrBuiltin):
		return &apierr.Error{Status: http.StatusConflict, Type: apierr.TypeInvalidRequest, Code: "builtin_skill", Param: "name", Message: msg}
	case errors.Is(err, skill.ErrExists):
		return &apierr.Error{Status: http.StatusConflict, Type: apierr.TypeInvalidRequest, Code: "skill_exists", Param: "name", Message: msg}
	}
	return storeAPIError(err, "skill", "")
}

// skillParam is the body field a skill.FieldError's field is about.
func skillParam(field string) string {
	switch {
	case field == "allowed-tools":
		return "allowed_tools"
	case strings.HasPrefix(field, "metadata."):
		return "metadata"
	case field == skill.ManifestName, field == "archive", field == "front matter":
		return "file" // an import's
	}
	return field
}

func (s *Server) listSkills(w http.ResponseWriter, r *http.Request) {
	list, err := s.p.Skills().List(r.Context(), workspace(r))
	if err != nil {
		apierr.Write(w, skillAPIError(err))
		return
	}
	for i := range list {
		// The list says what skills there are; GET /api/skills/{name}
		// has the instructions and files.
		list[i].Instructions, list[i].Files = "", nil
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"data": list})
}

func (s *Server) getSkill(w http.ResponseWriter, r *http.Request) {
	sk, err := s.p.Skills().Get(r.Context(), workspace(r), r.PathValue("name"))
	if err != nil {
		apierr.Write(w, skillAPIError(err))
		return
	}
	if sk.Files == nil {
		sk.Files = []skill.File{}
	}
	httpapi.WriteJSON(w, http.StatusOK, sk)
}

// getSkillFile answers one resource file as JSON: content when it is
// text, content_base64 otherwise.
func (s *Server) getSkillFile(w http.ResponseWriter, r *http.Request) {
	p := r.PathValue("path")
	data, err := s.p.Skills().ReadFile(r.Context(), workspace(r), r.PathValue("name"), p)
	if err != nil {
		apierr.Write(w, skillAPIError(err))
		return
	}
	out := skillFileBody{Path: p}
	if utf8.Valid(data) && !bytes.ContainsRune(data, 0) {
		text := string(data)
		out.Content = &text
	} else {
		enc := base64.StdEncoding.EncodeToString(data)
		out.ContentBase64 = &enc
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"path": out.Path, "size": len(data), "content": out.Content, "content_base64": out.ContentBase64})
}

func (s *Server) createSkill(w http.ResponseWriter, r *http.Request) {
	var b skillBody
	if !s.decodeBody(w, r, &b) {
		return
	}
	sk, ae := b.skill()
	if ae != nil {
		apierr.Write(w, ae)
		return
	}
	out, err := s.p.Skills().Create(r.Context(), workspace(r), sk)
	if err != nil {
		apierr.Write(w, skillAPIError(err))
		return
	}
	httpapi.WriteJSON(w, http.StatusCreated, out)
}

func (s *Server) updateSkill(w http.ResponseWriter, r *http.Request) {
	var b skillBody
	if !s.decodeBody(w, r, &b) {
		return
	}
	name := r.PathValue("name")
	if n := strings.TrimSpace(b.Name); n != "" && n != name {
		apierr.Write(w, apierr.BadRequest("name", fmt.Sprintf("name %q differs from the skill's %q: a skill keeps its name (its folder's); create a new one to rename", n, name)))
		return
	}
	b.Name = name
	sk, ae := b.skill()
	if ae != nil {
		apierr.Write(w, ae)
		return
	}
	out, err := s.p.Skills().Update(r.Context(), workspace(r), sk)
	if err != nil {
		apierr.Write(w, skillAPIError(err))
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

func (s *Server) deleteSkill(w http.ResponseWriter, r *http.Request) {
	if err := s.p.Skills().Delete(r.Context(), workspace(r), r.PathValue("name")); err != nil {
		apierr.Write(w, skillAPIError(err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// importSkill answers POST /api/skills/import: a zip archive of a skill's
// folder (or a lone SKILL.md), as the body or as the multipart part
// "file". ?replace=true replaces a skill of the same name. 201 when it
// created the skill, 200 when it replaced one.
func (s *Server) importSkill(w http.ResponseWriter, r *http.Request) {
	replace, err := strconv.ParseBool(cmp.Or(r.URL.Query().Get("replace"), "false"))
	if err != nil {
		apierr.Write(w, apierr.BadRequest("replace", "replace must be true or false"))
		return
	}
	lim := s.p.Skills().Limits()
	// A zip of the limit's worth of incompressible files is a little
	// larger than the files; 1 MiB more covers its directory.
	data, ok := readImport(w, r, lim.MaxTotalBytes+1<<20)
	if !ok {
		return
	}
	var sk skill.Skill
	switch {
	case bytes.HasPrefix(data, []byte("PK\x03\x04")) || bytes.HasPrefix(data, []byte("PK\x05\x06")):
		sk, err = skill.FromZip(bytes.NewReader(data), int64(len(data)), &lim)
	case bytes.HasPrefix(bytes.TrimPrefix(data, []byte("\ufeff")), []byte("---")):
		sk, err = skill.Parse(data)
	default:
		apierr.Write(w, apierr.BadRequest("file", "send a zip archive of the skill's folder, or its SKILL.md, as the body or as the multipart part \"file\""))
		return
	}
	if err != nil {
		apierr.Write(w, skillAPIError(err))
		return
	}
	out, created, err := s.p.Skills().Import(r.Context(), workspace(r), sk, replace)
	if err != nil {
		e := skillAPIError(err)
		if errors.Is(err, skill.ErrExists) {
			e.Message += " (or import with ?replace=true)"
		}
		apierr.Write(w, e)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	httpapi.WriteJSON(w, status, out)
}

// readImport reads the upload of an import: the first multipart part
// with a file name (or named "file"), or the whole body; at most max
// bytes. It answers errors itself.
func readImport(w http.ResponseWriter, r *http.Request, max int64) ([]byte, bool) {
	mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var src io.Reader = http.MaxBytesReader(w, r.Body, max)
	if mediaType == "multipart/form-data" {
		mr, err := multipartReader(w, r, max)
		if err != nil {
			apierr.Write(w, apierr.BadRequest("file", err.Error()))
			return nil, false
		}
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				apierr.Write(w, apierr.BadRequest("file", `no file in the request: send the zip as the multipart part "file"`))
				return nil, false
			}
			if err != nil {
				uploadReadError(w, err)
				return nil, false
			}
			if part.FileName() != "" || part.FormName() == "file" {
				src = part
				break
			}
			part.Close()
		}
	}
	data, err := io.ReadAll(src)
	if err != nil {
		uploadReadError(w, err)
		return nil, false
	}
	if len(data) == 0 {
		apierr.Write(w, apierr.BadRequest("file", "the upload is empty: send a zip archive of the skill's folder"))
		return nil, false
	}
	return data, true
}
