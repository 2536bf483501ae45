// side-by-side.mjs - the camera session through node-llama-cpp's function calling
// (bench/side-by-side.sh runs it; docs/bench.md describes what it measures).
//
// node side-by-side.mjs --model FILE --tools tools/camera.json --turns FILE
//                       [--ctx N] [--threads N] [--max-tokens N] [--no-max-length]
// node side-by-side.mjs --train-ctx --model FILE     (prints the model's trained context length)
//
// Prints one JSON object per turn on stdout:
//   {"turn": i, "prefill": tokens evaluated for this prompt, "decoded": tokens generated,
//    "ttft_ms": first token,
//    "call_ms": prompt start to the complete call, "turn_ms": the whole prompt() call,
//    "context": tokens in the context sequence after the turn, "call": {"tool", "args"} | null,
//    "error": null | "message"}
// The same GGUF as pipit, CPU only, greedy (temperature 0), the tools of the pipit pack as
// LlamaChatSession functions, Hermes-style calls through node-llama-cpp's Qwen chat wrapper,
// every answer forced to be a call through the wrapper's `noPrefixTrigger` (node-llama-cpp's
// own way to enter function calling at the first token), one call per turn: the function's
// handler stops the prompt once the call is complete, so the model does not write a reply
// after the result (pipit renders the reply from a template, without the model).
import fs from "node:fs";
import {getLlama, LlamaChatSession, LlamaLogLevel, LlamaText, QwenChatWrapper, readGgufFileInfo} from "node-llama-cpp";

function args(argv) {
    const o = {ctx: 2048, threads: 1, maxTokens: 96};
    for (let i = 2; i < argv.length; i++) {
        const a = argv[i];
        const v = () => {
            if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
            return argv[++i];
        };
        if (a === "--model") o.model = v();
        else if (a === "--tools") o.tools = v();
        else if (a === "--turns") o.turns = v();
        else if (a === "--ctx") o.ctx = Number(v());
        else if (a === "--threads") o.threads = Number(v());
        else if (a === "--max-tokens") o.maxTokens = Number(v());
        else if (a === "--train-ctx") o.trainCtx = true;
        else if (a === "--no-max-length") o.noMaxLength = true;
        else throw new Error(`unknown option ${a}`);
    }
    if (!o.model || (!o.trainCtx && (!o.tools || !o.turns))) throw new Error("--model, --tools and --turns are required");
    return o;
}

// Hermes calls (<tool_call>{"name": ..., "arguments": ...}</tool_call>) with every answer a call.
class ForcedCallQwenChatWrapper extends QwenChatWrapper {
    generateContextState(options) {
        const state = super.generateContextState(options);
        const n = options.availableFunctions == null ? 0 : Object.keys(options.availableFunctions).length;
        if (n === 0) return state;
        return {...state, noPrefixTrigger: {type: "functionCall", inject: LlamaText([])}};
    }
}

// pipit's tool pack -> node-llama-cpp function definitions. The parameter schemas are given as
// they are; node-llama-cpp's grammar enforces types, enums, required keys and maxLength (not
// minimum/maximum, which it does not support), so the script validates every call itself.
// --no-max-length drops maxLength too: llama.cpp's grammar parser refuses the repetition a
// long maxLength expands to (process_with_cloud_llm's 2,000 characters), which fails the turn.
function loadFunctions(path, onCall, noMaxLength) {
    const pack = JSON.parse(fs.readFileSync(path, "utf8"));
    const fns = {};
    for (const t of pack.tools) {
        const f = t.function;
        const params = JSON.parse(JSON.stringify(f.parameters));
        const hasProps = params.properties != null && Object.keys(params.properties).length > 0;
        fns[f.name] = {
            description: f.description,
            params: hasProps ? strip(params, noMaxLength) : undefined,
            handler: (p) => onCall(f.name, p)
        };
    }
    return fns;
}

function strip(s, noMaxLength) {
    if (Array.isArray(s)) return s.map((x) => strip(x, noMaxLength));
    if (s == null || typeof s !== "object") return s;
    const out = {};
    for (const [k, v] of Object.entries(s)) {
        if (k === "minimum" || k === "maximum") continue; // not in GbnfJsonSchema
        if (k === "maxLength" && noMaxLength) continue;
        out[k] = strip(v, noMaxLength);
    }
    return out;
}

const SYSTEM = "You control a device with tools. Reply with one tool call, or briefly in words.";

async function main() {
    const o = args(process.argv);
    if (o.trainCtx) {
        // --train-ctx: print the model's trained context length and exit
        const info = await readGgufFileInfo(o.model, {readTensorInfo: false});
        process.stdout.write(`${info.architectureMetadata.context_length}\n`);
        return;
    }
    const turns = fs.readFileSync(o.turns, "utf8").split("\n").map((l) => l.trim()).filter((l) => l !== "");
    const llama = await getLlama({
        gpu: false,
        build: "never",
        usePrebuiltBinaries: true,
        skipDownload: true,
        progressLogs: false,
        logLevel: LlamaLogLevel.error,
        maxThreads: o.threads
    });
    const model = await llama.loadModel({modelPath: o.model, gpuLayers: 0});
    const context = await model.createContext({contextSize: o.ctx, threads: o.threads, sequences: 1});
    const sequence = context.getSequence();
    const session = new LlamaChatSession({
        contextSequence: sequence,
        chatWrapper: new ForcedCallQwenChatWrapper({thoughts: "modelInitiated"}),
        systemPrompt: SYSTEM
    });
    let current = null; // the turn in progress
    // first-token time: when the context sequence yields the first token it sampled for the
    // turn (function-call tokens reach no onToken/onTextChunk callback before the call is done)
    const evaluate = sequence.evaluate.bind(sequence);
    sequence.evaluate = (tokens, options) => {
        const it = evaluate(tokens, options);
        return {
            async next(...a) {
                const r = await it.next(...a);
                if (!r.done && current != null && current.first == null) current.first = performance.now();
                return r;
            },
            return: (...a) => it.return(...a),
            throw: (...a) => it.throw(...a),
            [Symbol.asyncIterator]() {
                return this;
            }
        };
    };
    const functions = loadFunctions(o.tools, (name, params) => {
        if (current.call == null) {
            current.call = {tool: name, args: params ?? {}};
            current.callAt = performance.now();
        }
        current.abort.abort(); // one call per turn: stop before the model answers the result
        return {ok: true};
    }, o.noMaxLength);
    for (let i = 0; i < turns.length; i++) {
        const t = {call: null, callAt: null, first: null, abort: new AbortController()};
        current = t;
        const in0 = sequence.tokenMeter.usedInputTokens;
        const out0 = sequence.tokenMeter.usedOutputTokens;
        const t0 = performance.now();
        let error = null;
        try {
            await session.prompt(turns[i], {
                functions,
                maxParallelFunctionCalls: 1,
                maxTokens: o.maxTokens,
                temperature: 0,
                signal: t.abort.signal,
                stopOnAbortSignal: true
            });
        } catch (e) {
            error = String(e?.message ?? e);
        }
        const t1 = performance.now();
        const rec = {
            turn: i,
            prefill: sequence.tokenMeter.usedInputTokens - in0,
            decoded: sequence.tokenMeter.usedOutputTokens - out0,
            ttft_ms: t.first == null ? null : t.first - t0,
            call_ms: t.callAt == null ? null : t.callAt - t0,
            turn_ms: t1 - t0,
            context: sequence.nextTokenIndex,
            call: t.call,
            error
        };
        process.stdout.write(JSON.stringify(rec) + "\n");
    }
    await context.dispose();
    await model.dispose();
    await llama.dispose();
}

main().catch((e) => {
    process.stderr.write(`side-by-side.mjs: ${e?.stack ?? e}\n`);
    process.exit(1);
});
