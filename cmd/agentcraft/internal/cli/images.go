package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"time"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/internal/egress"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool/imagegen"
)

// imageUploads keeps generated pictures as uploads of the store for keep
// (imagegen.Uploads); GET /api/uploads/{id} serves them, and the
// knowledge sweep removes them once expired.
type imageUploads struct {
	st   store.Uploads
	keep time.Duration
}

func (u imageUploads) Save(ctx context.Context, workspaceID, name, mime string, data []byte) (string, error) {
	up, err := u.st.Put(ctx, store.Upload{WorkspaceID: workspaceID, Name: name, ContentType: mime,
		Size: int64(len(data)), Data: data, ExpiresAt: time.Now().Add(u.keep)})
	if err != nil {
		return "", err
	}
	return up.ID, nil
}

func (u imageUploads) Delete(ctx context.Context, workspaceID, id string) error {
	if err := u.st.Delete(ctx, workspaceID, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// registerImages builds the image back end of tools.images, when one is
// configured: it registers generate_image with the built-in tools (the
// catalog binds it to each caller's workspace) and keeps the generator in
// stk.images for workflow image nodes.
func registerImages(cfg config.Config, stk *stack, logger *slog.Logger) error {
	im := cfg.Tools.Images
	if im.Backend == "" {
		return nil
	}
	gen, err := newImages(cfg, stk.st, logger)
	if err != nil {
		return fmt.Errorf("tools.images: %w", err)
	}
	if err := stk.p.Tools().Register(gen.Tool()); err != nil {
		return fmt.Errorf("tools.images: %w", err)
	}
	stk.images = gen
	logger.Info("images_configured", "images", im)
	return nil
}

// newImages builds the generator of tools.images over the store's
// uploads.
func newImages(cfg config.Config, st store.Store, logger *slog.Logger) (*imagegen.Generator, error) {
	im := cfg.Tools.Images
	timeout := cmp.Or(im.Timeout, imagegen.DefaultTimeout)
	client, err := imageClient(cfg.Egress.Allow, im.BaseURL, timeout)
	if err != nil {
		return nil, err
	}
	var be imagegen.Backend
	switch im.Backend {
	case config.ImagesOpenAI:
		be, err = imagegen.NewOpenAI(client, &imagegen.OpenAIOptions{BaseURL: im.BaseURL, APIKey: im.APIKey, Model: im.Model})
	case config.ImagesComfyUI:
		graph := []byte(im.Workflow)
		if !im.InlineWorkflow() {
			if graph, err = os.ReadFile(im.Workflow); err != nil {
				return nil, fmt.Errorf("workflow: %w", err)
			}
		}
		be, err = imagegen.NewComfyUI(client, im.BaseURL, graph, &imagegen.ComfyUIOptions{APIKey: im.APIKey,
			PollInterval: im.PollInterval, Timeout: timeout, Logger: logger})
	default:
		err = fmt.Errorf("backend %q is not %s or %s", im.Backend, config.ImagesOpenAI, config.ImagesComfyUI)
	}
	if err != nil {
		return nil, err
	}
	return imagegen.New(be, imageUploads{st: st.Uploads(), keep: cmp.Or(im.Keep, config.DefaultImagesKeep)}, nil)
}

// imageClient is the egress-policy client of the image back end: the
// egress.allow entries plus the back end's own host and port, which the
// operator chose in the configuration (a ComfyUI on loopback or the LAN
// is the usual case) and no workflow author can change; a url an answer
// points elsewhere still follows egress.allow. One request may take a
// whole generation and carry MaxImages pictures in base64.
func imageClient(allow []string, baseURL string, timeout time.Duration) (*http.Client, error) {
	allow = slices.Clone(allow)
	if u, err := url.Parse(baseURL); err == nil && u.Hostname() != "" {
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		allow = append(allow, net.JoinHostPort(u.Hostname(), port))
	}
	g, err := (&egress.Policy{Allow: allow, Timeout: timeout,
		MaxResponseBytes: imagegen.MaxImages*(imagegen.DefaultMaxImageBytes/3*4+4096) + 1<<20}).Compile()
	if err != nil {
		return nil, fmt.Errorf("egress: %w", err)
	}
	return g.Client(), nil
}
