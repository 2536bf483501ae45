// summarize.mjs - one table from the per-turn records of bench/side-by-side.sh.
//
// node summarize.mjs --tools tools/camera.json NAME=FILE.pipit.jsonl|FILE.node.jsonl ...
//
// A FILE ending in .pipit.jsonl holds `pipit run --json` lines, one ending in .node.jsonl the
// lines of side-by-side.mjs. Every call of every side is checked here against the pack's schema
// by the same code: a known tool, every required argument, no other argument, the type, the
// enum and the minimum/maximum/maxLength of each value.
import fs from "node:fs";

function validate(schema, v) {
    if (schema.enum != null) return schema.enum.some((e) => e === v);
    switch (schema.type) {
        case "string":
            return typeof v === "string" && (schema.maxLength == null || [...v].length <= schema.maxLength);
        case "boolean":
            return typeof v === "boolean";
        case "integer":
        case "number":
            if (typeof v !== "number" || !Number.isFinite(v)) return false;
            if (schema.type === "integer" && !Number.isInteger(v)) return false;
            return (schema.minimum == null || v >= schema.minimum) && (schema.maximum == null || v <= schema.maximum);
        default:
            return false;
    }
}

// pipit's grammar also offers "none" (none of these tools) and its built-in "undo", both
// without arguments (docs/grammar.md, docs/agent.md): valid calls when they come from pipit.
const BUILTINS = new Set(["none", "undo"]);

function validCall(tools, call, builtins) {
    if (call == null || typeof call.tool !== "string") return false;
    if (builtins && BUILTINS.has(call.tool) && !tools.has(call.tool))
        return call.args != null && Object.keys(call.args).length === 0;
    const t = tools.get(call.tool);
    if (t == null) return false;
    const args = call.args ?? {};
    if (typeof args !== "object" || Array.isArray(args)) return false;
    const props = t.properties ?? {};
    for (const r of t.required ?? []) if (!(r in args)) return false;
    for (const [k, v] of Object.entries(args)) {
        if (props[k] == null || !validate(props[k], v)) return false;
    }
    return true;
}

// One side's turns as {prefill, ttft, call, ctx, calls: [..], failed}
function readPipit(path) {
    const out = [];
    for (const line of fs.readFileSync(path, "utf8").split("\n")) {
        if (line.trim() === "") continue;
        const d = JSON.parse(line);
        if (d.ok === false) {
            if (d.turn < 0) throw new Error(`${path}: pipit failed before the first turn: ${d.error?.message}`);
            out.push({failed: true, error: d.error?.code, calls: []});
            continue;
        }
        const c = d.counters;
        out.push({
            prefill: c.prefill_tokens,
            decoded: c.decode_tokens,
            ttft: c.model_calls > 0 ? c.ttft_ms : null,
            call: c.latency_ms,
            ctx: c.permanent_tokens + c.ephemeral_tokens_max,
            calls: (d.calls ?? []).map((k) => ({tool: k.tool, args: typeof k.args === "object" ? k.args : null})),
            failed: false
        });
    }
    return out;
}

function readNode(path) {
    const out = [];
    for (const line of fs.readFileSync(path, "utf8").split("\n")) {
        if (line.trim() === "") continue;
        const d = JSON.parse(line);
        out.push({
            prefill: d.prefill,
            decoded: d.decoded,
            ttft: d.ttft_ms,
            call: d.call_ms ?? d.turn_ms, // no complete call (cut by the token limit): the turn
            ctx: d.context,
            calls: d.call == null ? [] : [d.call],
            failed: d.error != null,
            error: d.error
        });
    }
    return out;
}

const pct = (xs, p) => {
    const v = xs.filter((x) => x != null).sort((a, b) => a - b);
    if (v.length === 0) return null;
    return v[Math.min(v.length - 1, Math.floor((p / 100) * v.length))];
};
const mean = (xs) => {
    const v = xs.filter((x) => x != null);
    return v.length === 0 ? null : v.reduce((a, b) => a + b, 0) / v.length;
};
const f0 = (x) => (x == null ? "n/a" : Math.round(x).toLocaleString("en-US"));
const f1 = (x) => (x == null ? "n/a" : x.toFixed(1));
const ms = (x) => (x == null ? "n/a" : x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${Math.round(x)} ms`);

function main() {
    const argv = process.argv.slice(2);
    let toolsPath = null;
    const sides = [];
    for (let i = 0; i < argv.length; i++) {
        if (argv[i] === "--tools") toolsPath = argv[++i];
        else {
            const eq = argv[i].indexOf("=");
            sides.push({name: argv[i].slice(0, eq), path: argv[i].slice(eq + 1)});
        }
    }
    const pack = JSON.parse(fs.readFileSync(toolsPath, "utf8"));
    const tools = new Map(pack.tools.map((t) => [t.function.name, t.function.parameters]));
    const cols = sides.map((s) => {
        const isPipit = s.path.endsWith(".pipit.jsonl");
        const turns = isPipit ? readPipit(s.path) : readNode(s.path);
        const later = turns.slice(1).filter((t) => !t.failed);
        const calls = turns.flatMap((t) => t.calls);
        const valid = calls.filter((c) => validCall(tools, c, isPipit)).length;
        const builtin = calls.filter((c) => isPipit && BUILTINS.has(c.tool) && !tools.has(c.tool)).length;
        const withValid = turns.filter((t) => t.calls.some((c) => validCall(tools, c, isPipit))).length;
        const n = turns.length;
        const at = (k) => (n >= k && turns[k - 1].ctx != null ? turns[k - 1].ctx : null);
        const errors = [...new Set(turns.filter((t) => t.failed).map((t) => t.error))];
        return {
            name: s.name,
            n,
            first: turns[0],
            prefillP50: pct(later.map((t) => t.prefill), 50),
            prefillMax: later.length === 0 ? null : Math.max(...later.map((t) => t.prefill)),
            prefillFirst: mean(turns.slice(1, Math.min(20, n)).filter((t) => !t.failed).map((t) => t.prefill)),
            prefillLast: mean(turns.slice(Math.max(1, n - 19)).filter((t) => !t.failed).map((t) => t.prefill)),
            callP50: pct(later.map((t) => t.call), 50),
            callP95: pct(later.map((t) => t.call), 95),
            decodedP50: pct(later.map((t) => t.decoded), 50),
            decodedMax: later.length === 0 ? null : Math.max(...later.map((t) => t.decoded ?? 0)),
            perTokenP50: pct(later.map((t) => (t.decoded > 0 ? t.call / t.decoded : null)), 50),
            ttftP50: pct(later.map((t) => t.ttft), 50),
            ttftP95: pct(later.map((t) => t.ttft), 95),
            ctx20: at(20),
            ctxN: at(n),
            valid,
            calls: calls.length,
            builtin,
            withValid,
            failed: turns.filter((t) => t.failed).length,
            errors
        };
    });
    const n = cols[0].n;
    const row = (label, f) => `| ${label} | ${cols.map(f).join(" | ")} |`;
    const lines = [
        `| ${n} turns | ${cols.map((c) => c.name).join(" | ")} |`,
        `|---|${cols.map(() => "---:").join("|")}|`,
        row("prefilled tokens, turn 1 (system prompt and tools)", (c) => f0(c.first.prefill)),
        row("prefilled tokens per turn, turns 2-N: p50 / max", (c) => `${f0(c.prefillP50)} / ${f0(c.prefillMax)}`),
        row("prefilled tokens per turn: mean of turns 2-20 / of the last 20", (c) => `${f1(c.prefillFirst)} / ${f1(c.prefillLast)}`),
        row("constrained-call time, turns 2-N: p50 / p95", (c) => `${ms(c.callP50)} / ${ms(c.callP95)}`),
        row("generated tokens per call, turns 2-N: p50 / max", (c) => `${f0(c.decodedP50)} / ${f0(c.decodedMax)}`),
        row("constrained-call time per generated token, turns 2-N: p50", (c) => ms(c.perTokenP50)),
        row("first-token time, turn 1 (cold)", (c) => ms(c.first.ttft)),
        row("first-token time, turns 2-N: p50 / p95", (c) => `${ms(c.ttftP50)} / ${ms(c.ttftP95)}`),
        row("context tokens after 20 turns", (c) => f0(c.ctx20)),
        row(`context tokens after ${n} turns`, (c) => f0(c.ctxN)),
        row("valid calls (schema incl. ranges) / calls", (c) => `${c.valid} / ${c.calls}${c.builtin > 0 ? ` (${c.builtin} none/undo)` : ""}`),
        row("valid calls of the pack's tools (none/undo left out)", (c) => `${c.valid - c.builtin}`),
        row("turns with a valid call", (c) => `${c.withValid} / ${c.n}`),
        row("failed turns", (c) => `${c.failed}${c.errors.length > 0 ? ` (${c.errors.join("; ")})` : ""}`)
    ];
    process.stdout.write(lines.join("\n") + "\n");
}

main();
