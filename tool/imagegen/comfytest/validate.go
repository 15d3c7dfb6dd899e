package comfytest

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Input kinds besides link types (MODEL, CLIP, …): the widget types
// ComfyUI converts and checks.
const (
	kindInt    = "INT"
	kindFloat  = "FLOAT"
	kindString = "STRING"
	kindCombo  = "COMBO"
)

// Class is a node class the fake knows: its required inputs, in order,
// its outputs' types, and whether it is an output node.
type Class struct {
	Inputs  []Input
	Outputs []string
	output  bool
}

// Input is one required input of a class.
type Input struct {
	Name string
	// Type is INT, FLOAT, STRING, COMBO, or the type of a link (MODEL,
	// CLIP, VAE, CONDITIONING, LATENT, IMAGE).
	Type string
	// Min and Max bound INT and FLOAT values.
	Min, Max float64
	// Options are a COMBO's values; nil for ckpt_name, whose values are
	// Options.Checkpoints.
	Options []string
}

var (
	samplers   = []string{"euler", "euler_ancestral", "dpmpp_2m", "dpmpp_2m_sde", "ddim"}
	schedulers = []string{"normal", "karras", "exponential", "sgm_uniform", "simple"}
)

// Classes are the node classes of a text-to-image graph, as ComfyUI
// defines their required inputs.
var Classes = map[string]Class{
	"CheckpointLoaderSimple": {Inputs: []Input{{Name: "ckpt_name", Type: kindCombo}}, Outputs: []string{"MODEL", "CLIP", "VAE"}},
	"CLIPTextEncode":         {Inputs: []Input{{Name: "text", Type: kindString}, {Name: "clip", Type: "CLIP"}}, Outputs: []string{"CONDITIONING"}},
	"EmptyLatentImage": {Inputs: []Input{{Name: "width", Type: kindInt, Min: 16, Max: 16384}, {Name: "height", Type: kindInt, Min: 16, Max: 16384},
		{Name: "batch_size", Type: kindInt, Min: 1, Max: 4096}}, Outputs: []string{"LATENT"}},
	"KSampler": {Inputs: []Input{{Name: "model", Type: "MODEL"}, {Name: "seed", Type: kindInt, Min: 0, Max: math.MaxUint64},
		{Name: "steps", Type: kindInt, Min: 1, Max: 10000}, {Name: "cfg", Type: kindFloat, Min: 0, Max: 100},
		{Name: "sampler_name", Type: kindCombo, Options: samplers}, {Name: "scheduler", Type: kindCombo, Options: schedulers},
		{Name: "positive", Type: "CONDITIONING"}, {Name: "negative", Type: "CONDITIONING"}, {Name: "latent_image", Type: "LATENT"},
		{Name: "denoise", Type: kindFloat, Min: 0, Max: 1}}, Outputs: []string{"LATENT"}},
	"VAEDecode":    {Inputs: []Input{{Name: "samples", Type: "LATENT"}, {Name: "vae", Type: "VAE"}}, Outputs: []string{"IMAGE"}},
	"SaveImage":    {Inputs: []Input{{Name: "images", Type: "IMAGE"}, {Name: "filename_prefix", Type: kindString}}, output: true},
	"PreviewImage": {Inputs: []Input{{Name: "images", Type: "IMAGE"}}, output: true},
}

// validation is one prompt's check, memoized per node as ComfyUI's
// validate_inputs is.
type validation struct {
	s      *Server
	graph  map[string]any
	done   map[string]bool  // node → valid
	errors map[string][]any // node → its own problems
}

// validate checks a graph as ComfyUI's validate_prompt does. It returns
// the HTTP status and body of a refusal, or a nil body when the prompt
// is accepted.
func (s *Server) validate(graph map[string]any) (int, map[string]any) {
	refuse := func(typ, msg, details string) (int, map[string]any) {
		return http.StatusBadRequest, map[string]any{"error": promptError(typ, msg, details), "node_errors": map[string]any{}}
	}
	var outputs []string
	for _, id := range sortedNodeIDs(graph) {
		node, ok := graph[id].(map[string]any)
		if !ok {
			return refuse("invalid_prompt", "Cannot execute because a node is missing the class_type property.", fmt.Sprintf("Node ID '#%s'", id))
		}
		class, ok := node["class_type"].(string)
		if !ok {
			return refuse("invalid_prompt", "Cannot execute because a node is missing the class_type property.", fmt.Sprintf("Node ID '#%s'", id))
		}
		c, known := Classes[class]
		if !known {
			return refuse("invalid_prompt", fmt.Sprintf("Cannot execute because node %s does not exist.", class), fmt.Sprintf("Node ID '#%s'", id))
		}
		if c.output {
			outputs = append(outputs, id)
		}
	}
	if len(outputs) == 0 {
		return http.StatusBadRequest, map[string]any{"error": promptError("prompt_no_outputs", "Prompt has no outputs", ""), "node_errors": []any{}}
	}
	v := &validation{s: s, graph: graph, done: map[string]bool{}, errors: map[string][]any{}}
	nodeErrors := map[string]any{}
	var details []string
	for _, o := range outputs {
		if v.node(o) {
			continue
		}
		for _, id := range sortedNodeIDs(graph) {
			errs := v.errors[id]
			if len(errs) == 0 {
				continue
			}
			ne, ok := nodeErrors[id].(map[string]any)
			if !ok {
				ne = map[string]any{"errors": errs, "dependent_outputs": []any{}, "class_type": graph[id].(map[string]any)["class_type"]}
				nodeErrors[id] = ne
				for _, e := range errs {
					m := e.(map[string]any)
					details = append(details, fmt.Sprintf("%s: %s", m["message"], m["details"]))
				}
			}
			ne["dependent_outputs"] = append(ne["dependent_outputs"].([]any), o)
		}
	}
	// ComfyUI runs the outputs that validated and refuses only a graph
	// none of whose outputs did; the fake refuses a partly broken graph
	// as a whole, which no test of a well-formed graph can tell apart.
	if len(nodeErrors) > 0 {
		return http.StatusBadRequest, map[string]any{"error": promptError("prompt_outputs_failed_validation", "Prompt outputs failed validation", strings.Join(details, "\n")),
			"node_errors": nodeErrors}
	}
	return http.StatusOK, nil
}

// node validates node id and what it links to, and reports whether it is
// valid. A node downstream of an invalid one is invalid without problems
// of its own, as in ComfyUI.
func (v *validation) node(id string) bool {
	if ok, seen := v.done[id]; seen {
		return ok
	}
	v.done[id] = false // a cycle is invalid
	node := v.graph[id].(map[string]any)
	class := Classes[node["class_type"].(string)]
	inputs, _ := node["inputs"].(map[string]any)
	var errs []any
	valid := true
	for _, in := range class.Inputs {
		val, present := inputs[in.Name]
		if !present {
			errs = append(errs, inputError("required_input_missing", "Required input is missing", in.Name, in.Name, nil))
			continue
		}
		if link, ok := val.([]any); ok {
			if !v.link(in, link, &errs) {
				valid = false
			}
			continue
		}
		if e := v.widget(in, val); e != nil {
			errs = append(errs, e)
		}
	}
	v.errors[id] = errs
	ok := valid && len(errs) == 0
	v.done[id] = ok
	return ok
}

// link checks one [node_id, slot] input and the node it names.
func (v *validation) link(in Input, link []any, errs *[]any) bool {
	src, okID := link[0].(string)
	slot, okSlot := 0.0, false
	if len(link) == 2 {
		slot, okSlot = link[1].(float64)
	}
	if len(link) != 2 || !okID || !okSlot || slot != math.Trunc(slot) {
		*errs = append(*errs, inputError("bad_linked_input", "Bad linked input, must be a length-2 list of [node_id, slot_index]", in.Name, in.Name, link))
		return true
	}
	node, ok := v.graph[src].(map[string]any)
	if !ok {
		*errs = append(*errs, inputError("bad_linked_input", "Bad linked input: the linked node does not exist", fmt.Sprintf("%s: node '%s'", in.Name, src), in.Name, link))
		return true
	}
	outs := Classes[node["class_type"].(string)].Outputs
	if slot < 0 || int(slot) >= len(outs) || outs[int(slot)] != in.Type {
		received := "none"
		if slot >= 0 && int(slot) < len(outs) {
			received = outs[int(slot)]
		}
		*errs = append(*errs, inputError("return_type_mismatch", "Return type mismatch between linked nodes",
			fmt.Sprintf("%s, received_type(%s) mismatch input_type(%s)", in.Name, received, in.Type), in.Name, link))
		return true
	}
	return v.node(src)
}

// widget checks a literal input value: conversion to its type, bounds,
// list membership.
func (v *validation) widget(in Input, val any) any {
	switch in.Type {
	case kindInt, kindFloat:
		f, ok := number(val, in.Type == kindInt)
		if !ok {
			return inputError("invalid_input_type", fmt.Sprintf("Failed to convert an input value to a %s value", in.Type),
				fmt.Sprintf("%s, %v, invalid literal", in.Name, val), in.Name, val)
		}
		if f < in.Min {
			return inputError("value_smaller_than_min", fmt.Sprintf("Value %v smaller than min of %v", val, in.Min), in.Name, in.Name, val)
		}
		if f > in.Max {
			return inputError("value_bigger_than_max", fmt.Sprintf("Value %v bigger than max of %v", val, in.Max), in.Name, in.Name, val)
		}
	case kindString:
		switch val.(type) {
		case string, float64, bool:
		default:
			return inputError("invalid_input_type", "Failed to convert an input value to a STRING value", in.Name, in.Name, val)
		}
	case kindCombo:
		opts := in.Options
		if opts == nil {
			opts = v.s.opts.Checkpoints
		}
		s, _ := val.(string)
		if !slices.Contains(opts, s) {
			return inputError("value_not_in_list", "Value not in list", fmt.Sprintf("%s: '%v' not in %v", in.Name, val, opts), in.Name, val)
		}
	default:
		// A literal where a link of another node's output belongs.
		return inputError("bad_linked_input", "Bad linked input, must be a length-2 list of [node_id, slot_index]", in.Name, in.Name, val)
	}
	return nil
}

// number converts val as Python's int() or float() would: a JSON number,
// or a string holding one.
func number(val any, integer bool) (float64, bool) {
	switch t := val.(type) {
	case float64:
		if integer && t != math.Trunc(t) {
			return 0, false
		}
		return t, true
	case string:
		if integer {
			n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
			return float64(n), err == nil
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
		return f, err == nil
	}
	return 0, false
}

func inputError(typ, msg, details, name string, received any) map[string]any {
	return map[string]any{"type": typ, "message": msg, "details": details,
		"extra_info": map[string]any{"input_name": name, "received_value": received}}
}
