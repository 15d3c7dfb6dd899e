package a2a

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/agentcraftlab/agentcraft/tool"
)

// Tool offers the remote agent behind client to a model as a tool. Its name
// is the card's name reduced to the characters tool names allow; its one
// argument is the message to send; the agent's answer is the result. A
// remote failure is an error result, for the model to read.
func Tool(client *Client, card *AgentCard) tool.Tool {
	if card == nil {
		card = client.Card()
	}
	return remoteTool{client: client, card: card, name: toolName(card.Name)}
}

var invalidToolChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

func toolName(name string) string {
	n := strings.Trim(invalidToolChars.ReplaceAllString(name, "_"), "_")
	if n == "" {
		n = "remote_agent"
	}
	if len(n) > 64 {
		n = n[:64]
	}
	return n
}

type remoteTool struct {
	client *Client
	card   *AgentCard
	name   string
}

func (t remoteTool) Name() string { return t.name }

func (t remoteTool) Description() string {
	d := "Ask the remote agent " + t.card.Name + "."
	if t.card.Description != "" {
		d += " " + t.card.Description
	}
	return d
}

func (t remoteTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"what to ask the agent, in full sentences"}},"required":["message"],"additionalProperties":false}`)
}

func (t remoteTool) Capability() tool.Capability { return tool.CapabilityMedium }

func (t remoteTool) Call(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	var in struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(args, &in); err != nil || strings.TrimSpace(in.Message) == "" {
		return tool.ErrorResult(`arguments must be {"message": "…"} with a non-empty message`), nil
	}
	answer, _, err := t.client.SendText(ctx, in.Message)
	if err != nil {
		return tool.ErrorResult("remote agent %s failed: %v", t.card.Name, err), nil
	}
	return tool.Result{Content: answer}, nil
}
