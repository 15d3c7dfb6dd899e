package imagegen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentcraftlab/agentcraft/tool"
)

// ToolName is the name of the tool Generator.Tool returns.
const ToolName = "generate_image"

// Tool returns generate_image, unbound: it implements
// tool.WorkspaceBound, and the tool catalog hands agents and task steps
// the tool ForWorkspace binds to their workspace, where it stores the
// pictures. It also implements tool.Undoable: undoing a call deletes the
// uploads it made.
func (g *Generator) Tool() tool.Tool { return &generateImage{gen: g} }

// generateImage is the generate_image tool; workspace is "" until bound.
type generateImage struct {
	gen       *Generator
	workspace string
}

var (
	_ tool.WorkspaceBound = (*generateImage)(nil)
	_ tool.Undoable       = (*generateImage)(nil)
)

func (*generateImage) Name() string { return ToolName }

func (*generateImage) Description() string {
	return "Draw pictures from a text prompt. The pictures are stored as uploads of the workspace; the answer gives each one's upload_id and url (to show or attach it) and the prompt used. " +
		"Describe subject, style and composition in the prompt."
}

var generateSchema = fmt.Sprintf(`{"type":"object","properties":{`+
	`"prompt":{"type":"string","minLength":1,"maxLength":%d,"description":"what to draw: subject, style, composition, lighting"},`+
	`"size":{"type":"string","description":"WIDTHxHEIGHT such as 1024x1024 or 1536x1024; default: the back end's"},`+
	`"n":{"type":"integer","minimum":1,"maximum":%d,"description":"how many pictures, default 1"},`+
	`"negative_prompt":{"type":"string","maxLength":%d,"description":"what to keep out of the picture (not every back end takes one)"},`+
	`"seed":{"type":"integer","minimum":0,"description":"a seed, to draw the same picture again (not every back end takes one)"}`+
	`},"required":["prompt"],"additionalProperties":false}`, MaxPromptRunes, MaxImages, MaxPromptRunes)

const generateExample = `{"prompt": "a lighthouse at dawn, watercolor", "size": "1024x1024"}`

func (*generateImage) Schema() json.RawMessage { return json.RawMessage(generateSchema) }

// Capability is medium: a call spends the back end's compute (or money)
// and stores files in the workspace, which Undo deletes.
func (*generateImage) Capability() tool.Capability { return tool.CapabilityMedium }

// ForWorkspace implements tool.WorkspaceBound.
func (t *generateImage) ForWorkspace(workspaceID string) tool.Tool {
	return &generateImage{gen: t.gen, workspace: workspaceID}
}

// Call implements tool.Tool: the answer is the Result as JSON. A request
// the back end cannot take or a back end that fails is an error result.
func (t *generateImage) Call(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	if t.workspace == "" {
		return tool.Result{}, errors.New("imagegen: generate_image was called without a workspace: resolve it through the tool catalog, which binds it")
	}
	var req Request
	if res, ok := tool.DecodeArguments(json.RawMessage(generateSchema), generateExample, args, &req); !ok {
		return res, nil
	}
	out, err := t.gen.Generate(ctx, t.workspace, req)
	if err != nil {
		return tool.ErrorResult("no picture was drawn: %v", err), nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return tool.Result{}, fmt.Errorf("imagegen: encode result: %w", err)
	}
	return tool.Result{Content: string(b)}, nil
}

// undoPayload lists the uploads a call made.
type undoPayload struct {
	UploadIDs []string `json:"upload_ids"`
}

// UndoOf implements tool.Undoable: the uploads named in the result.
func (t *generateImage) UndoOf(_ json.RawMessage, res tool.Result) (json.RawMessage, error) {
	if res.IsError {
		return nil, nil
	}
	var out Result
	if err := json.Unmarshal([]byte(res.Content), &out); err != nil {
		return nil, fmt.Errorf("imagegen: undo of: the result is not generate_image's: %w", err)
	}
	var p undoPayload
	for _, img := range out.Images {
		p.UploadIDs = append(p.UploadIDs, img.UploadID)
	}
	if len(p.UploadIDs) == 0 {
		return nil, nil
	}
	return json.Marshal(p)
}

// Undo implements tool.Undoable: it deletes the uploads of the payload
// from the bound workspace.
func (t *generateImage) Undo(ctx context.Context, payload json.RawMessage) error {
	if t.workspace == "" {
		return errors.New("imagegen: undo generate_image without a workspace")
	}
	var p undoPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return fmt.Errorf("imagegen: undo: payload: %w", err)
	}
	var errs []error
	for _, id := range p.UploadIDs {
		if err := t.gen.uploads.Delete(ctx, t.workspace, id); err != nil {
			errs = append(errs, fmt.Errorf("delete upload %s: %w", id, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("imagegen: undo: %w", err)
	}
	return nil
}
