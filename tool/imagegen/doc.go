// Package imagegen makes pictures for agents and workflows: a Backend
// draws them — OpenAI, any server speaking the OpenAI images API (LocalAI,
// a gateway), or a ComfyUI server running an operator's workflow — and a
// Generator keeps each picture as an upload of the caller's workspace and
// offers the generate_image tool.
//
//	be, err := imagegen.NewComfyUI(client, "http://127.0.0.1:8188", graph, nil)
//	// or: imagegen.NewOpenAI(client, &imagegen.OpenAIOptions{APIKey: key})
//	gen, err := imagegen.New(be, uploads, nil)
//	res, err := gen.Generate(ctx, workspaceID, imagegen.Request{Prompt: "a lighthouse at dawn"})
//	// res.Images[0].UploadID, .URL ("/api/uploads/<id>"), .MIME
//	reg.Register(gen.Tool()) // generate_image, bound to a workspace by package catalog
//
// Every request goes through the *http.Client the caller passes; the
// server passes its egress-policy client (package internal/egress), so a
// back end cannot be used to reach hosts the policy refuses. Every body
// read is bounded, every picture is checked to be one (its bytes sniffed,
// never the server's word for it), and a failure names what to fix.
//
// # OpenAI images API
//
// POST {base_url}/images/generations with {model, prompt, n, size,
// response_format: "b64_json"} and the API key as a Bearer token. An answer
// may carry each image as b64_json or as a url, which is fetched through
// the same client (with the key only when the url is on the base URL's
// host). gpt-image-* models always answer base64 and refuse
// response_format, so it is left out for them. The API has no negative
// prompt and no seed: a Request with either is refused, never silently
// drawn without it.
//
// # ComfyUI
//
// The operator exports a workflow in API format (ComfyUI's "Export (API)":
// an object of node id → {"class_type", "inputs"}) and marks where a
// request's values go with placeholders in its string inputs:
//
//	{{prompt}}           the prompt (required somewhere in the graph)
//	{{negative_prompt}}  Request.NegativePrompt ("" when not given)
//	{{seed}}             Request.Seed, else a random seed per call
//	{{width}} {{height}} Request.Size, else DefaultSize
//	{{batch_size}}       Request.N
//
// An input whose whole value is one placeholder takes the value's type
// ("seed": "{{seed}}" becomes "seed": 1234, a number, as KSampler wants);
// a placeholder inside longer text is replaced by its text ("text":
// "{{prompt}}, watercolor"). Spaces inside the braces are allowed. Only
// the values of nodes' "inputs" are searched; an unknown placeholder, or a
// graph without {{prompt}}, is refused when the back end is built, and a
// Request field the graph has no placeholder for (a size, a negative
// prompt, a seed) is refused per call rather than ignored. N > 1 without
// {{batch_size}} queues one prompt per image, each with the next seed
// (which needs {{seed}}, or ComfyUI's cache would answer the same picture
// N times).
//
// A call queues the graph (POST /prompt {"prompt", "client_id"}; a 400
// with node_errors becomes an error naming each node and problem), polls
// GET /history/{prompt_id} every PollInterval until the prompt's entry
// appears (status "error" becomes the execution_error's node and message),
// and fetches every image of its outputs with GET /view?filename=&subfolder=&type=
// — those of type "output" (SaveImage), or the "temp" previews when the
// graph saves none. Timeout bounds the whole call; when it or the caller's
// context ends first, the prompt is taken off ComfyUI's queue (POST
// /queue {"delete": [id]}) so an abandoned request does not hold the GPU.
//
// Package comfytest is a strict fake of those endpoints and
// imagegentest one of the OpenAI images endpoint, for tests.
package imagegen
