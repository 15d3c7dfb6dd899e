package imagegen

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Uploads keeps generated pictures as uploads of a workspace. The server
// implements it over its store (store.Uploads), so a picture is served by
// GET /api/uploads/{id} to members of that workspace only.
type Uploads interface {
	// Save stores data as an upload of the workspace called name and
	// returns its id.
	Save(ctx context.Context, workspaceID, name, mime string, data []byte) (id string, err error)
	// Delete removes the workspace's upload id; an upload already gone
	// is no error (undoing a call may be retried).
	Delete(ctx context.Context, workspaceID, id string) error
}

// Options configure a Generator.
type Options struct {
	// UploadURL is where the API serves an upload. Default:
	// "/api/uploads/" + id, the route of package server.
	UploadURL func(id string) string
}

// Generator draws pictures with a Backend and keeps them as uploads.
// Create it with New; it is safe for concurrent use.
type Generator struct {
	backend Backend
	uploads Uploads
	url     func(string) string
}

// New returns a Generator over backend and uploads, both required.
func New(backend Backend, uploads Uploads, opts *Options) (*Generator, error) {
	if backend == nil || uploads == nil {
		return nil, errors.New("imagegen: new: a back end and an upload store are required")
	}
	g := &Generator{backend: backend, uploads: uploads, url: func(id string) string { return "/api/uploads/" + id }}
	if opts != nil && opts.UploadURL != nil {
		g.url = opts.UploadURL
	}
	return g, nil
}

// Result is what a generation made.
type Result struct {
	// Images are the stored pictures, in the back end's order.
	Images []Stored `json:"images"`
	// Prompt is the prompt they were drawn from.
	Prompt string `json:"prompt"`
}

// Stored is one picture kept as an upload.
type Stored struct {
	UploadID string `json:"upload_id"`
	MIME     string `json:"mime"`
	// URL is where the API serves it (Options.UploadURL).
	URL string `json:"url"`
	// Seed is the seed it was drawn with, when the back end reports it.
	Seed *int64 `json:"seed,omitempty"`
}

// Generate draws req for the workspace and stores every picture as one of
// its uploads. A back end that answers no picture is an error, never an
// empty success. Pictures stored before a later one fails stay until
// their uploads expire.
func (g *Generator) Generate(ctx context.Context, workspaceID string, req Request) (Result, error) {
	if workspaceID == "" {
		return Result{}, errors.New("imagegen: generate: no workspace to store the images in")
	}
	req.Prompt = strings.TrimSpace(req.Prompt)
	if err := req.Validate(); err != nil {
		return Result{}, err
	}
	images, err := g.backend.Generate(ctx, req)
	if err != nil {
		return Result{}, err
	}
	if len(images) == 0 {
		return Result{}, errors.New("imagegen: generate: the back end answered no images")
	}
	res := Result{Prompt: req.Prompt, Images: make([]Stored, 0, len(images))}
	for i, img := range images {
		name := fmt.Sprintf("image-%d%s", i+1, extension(img.MIME))
		id, err := g.uploads.Save(ctx, workspaceID, name, img.MIME, img.Data)
		if err != nil {
			return Result{}, fmt.Errorf("imagegen: store image %d: %w", i+1, err)
		}
		res.Images = append(res.Images, Stored{UploadID: id, MIME: img.MIME, URL: g.url(id), Seed: img.Seed})
	}
	return res, nil
}

func extension(mime string) string {
	switch mime {
	case "image/png":
		return ".png"
	case "image/jpeg":
		return ".jpg"
	case "image/webp":
		return ".webp"
	case "image/gif":
		return ".gif"
	}
	return ""
}
