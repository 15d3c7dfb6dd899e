package nodes

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentcraftlab/agentcraft/tool/imagegen"
	"github.com/agentcraftlab/agentcraft/workflow"
)

// imageKind draws pictures with the server's image back end and stores
// them as uploads of the run's workspace.
//
// Like the contract kinds it is executable but neither imperative nor
// agent-like: it runs once, in order, on its input, which every strategy
// can do, so a sequential content pipeline keeps its strategy when it
// gains an image step.
func imageKind() workflow.Kind {
	return workflow.Kind{
		Type:     "image",
		Title:    "Image",
		Category: workflow.CategoryIntegration,
		// Not Network: the back end is the server's own configuration,
		// reached through its client, never Services.HTTP (as tool's).
		SideEffects:  true,
		Example:      map[string]any{"prompt": "An illustration of {{input}}", "size": "1024x1024"},
		Doc:          "Draws pictures with the server's image back end (tools.images: OpenAI images API or ComfyUI) and stores them as uploads. Output: {images: [{upload_id, mime, url, seed}], prompt}.",
		Execute:      execImage,
		IsExecutable: true,
		Config: []workflow.ConfigKey{
			{Name: "prompt", Type: workflow.TypeTemplate, Default: "{{input}}", Doc: "what to draw; a template, such as \"Cover art for: {{nodes.plan.output.topic}}\""},
			{Name: "negative_prompt", Type: workflow.TypeTemplate, Doc: "what to keep out of the picture (ComfyUI workflows with {{negative_prompt}} only)"},
			{Name: "size", Type: workflow.TypeString, Doc: "WIDTHxHEIGHT such as 1024x1024 or 1536x1024; default: the back end's"},
			{Name: "n", Type: workflow.TypeInteger, Min: atLeast(1), Default: 1, Doc: fmt.Sprintf("how many pictures, at most %d", imagegen.MaxImages)},
			{Name: "seed", Type: workflow.TypeInteger, Min: atLeast(0), Doc: "a fixed seed, to draw the same picture again (ComfyUI workflows with {{seed}} only); default random"},
		},
		Rules: []string{"size is WIDTHxHEIGHT, each side 64 to 4096", fmt.Sprintf("n is at most %d", imagegen.MaxImages)},
		Check: checkImage,
	}
}

// checkImage checks what the key types cannot: the size's form and n's
// maximum.
func checkImage(cfg map[string]any, at string) []workflow.Problem {
	var probs []workflow.Problem
	if s, ok := cfg["size"].(string); ok {
		if _, _, err := imagegen.ParseSize(s); err != nil {
			probs = append(probs, workflow.Problem{Path: at + ".size", Message: err.Error(), Hint: `set "size" like "1024x1024", or leave it out`})
		}
	}
	if n, ok := cfg["n"].(float64); ok && n > imagegen.MaxImages {
		probs = append(probs, workflow.Problem{Path: at + ".n", Message: fmt.Sprintf("%v is above the maximum %d", n, imagegen.MaxImages),
			Hint: fmt.Sprintf("set \"n\" to at most %d, or add another image node", imagegen.MaxImages)})
	}
	return probs
}

// execImage renders the prompts and has Services.Images draw and store
// the pictures. A back end that fails, or draws nothing, fails the node:
// an image step that silently produced no image is the failure the
// content pipeline's gates exist to stop.
func execImage(ctx context.Context, x *workflow.Exec) (workflow.Result, error) {
	if x.Services.Images == nil {
		return workflow.Result{}, errors.New("image nodes need an image back end, and this server has none: set tools.images in agentcraft.yaml (backend openai or comfyui)")
	}
	prompt, err := configText(x, "prompt", "{{input}}")
	if err != nil {
		return workflow.Result{}, err
	}
	if prompt == "" {
		return workflow.Result{}, errors.New("config.prompt: the prompt is empty: give the node an input or set prompt to what to draw")
	}
	req := imagegen.Request{Prompt: prompt, N: intOr(x.Node.Config["n"], 1)}
	if _, ok := x.Node.Config["negative_prompt"]; ok {
		if req.NegativePrompt, err = configText(x, "negative_prompt", ""); err != nil {
			return workflow.Result{}, err
		}
	}
	req.Size, _ = x.Node.Config["size"].(string)
	if s, ok := x.Node.Config["seed"].(float64); ok {
		seed := int64(s)
		req.Seed = &seed
	}
	res, err := x.Services.Images.Generate(ctx, x.WorkspaceID, req)
	if err != nil {
		return workflow.Result{}, err
	}
	out, err := jsonNative(res)
	if err != nil {
		return workflow.Result{}, err
	}
	return workflow.Result{Output: out}, nil
}

// configText renders the template key as trimmed text.
func configText(x *workflow.Exec, key, def string) (string, error) {
	v, err := x.ConfigTemplate(key, def)
	if err != nil {
		return "", err
	}
	s, err := textOf(v)
	if err != nil {
		return "", fmt.Errorf("config.%s: %w", key, err)
	}
	return strings.TrimSpace(s), nil
}
