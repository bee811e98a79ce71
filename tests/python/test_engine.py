"""The Python binding (bindings/python), run by ctest with pytest.

ENGINE_DEFAULT_MODEL is stories260K in the repository; ENGINE_SHARED_DIR the
extended test data (the documented greedy text), whose tests skip without it."""

import json
import os
import threading

import numpy as np
import pytest

import engine

MODEL = os.environ["ENGINE_DEFAULT_MODEL"]
SHARED = os.environ.get("ENGINE_SHARED_DIR", "")


@pytest.fixture(scope="module")
def model():
    return engine.Model(MODEL)


def test_the_greedy_text_is_llama2c_documented_one(model):
    expected = os.path.join(SHARED, "models/expected/stories260K.expected.json")
    if not os.path.exists(expected):
        pytest.skip(f"{expected} is not there (../shared)")
    with open(expected) as f:
        want = json.load(f)["documented"]["greedy_from_bos_200_steps_text"]
    session = engine.Session(model, n_ctx=256)
    text = "".join(engine.generate(session, [model.bos], 200))
    assert text == want
    assert model.generate([model.bos], max_tokens=200) == want  # the one-call form


def test_tokens_and_text(model):
    ids = model.tokenize("Once upon a time")
    assert ids[0] == model.bos
    assert model.detokenize(ids) == "Once upon a time"  # BOS gives nothing, no leading space
    assert model.tokenize("Once upon a time", add_bos=False) == ids[1:]
    assert b"".join(model.token_bytes(t) for t in ids[1:]).decode().strip() == "Once upon a time"
    assert model.n_vocab == 512


def test_errors_carry_the_engines_message_and_status(model):
    with pytest.raises(engine.EngineError) as e:
        engine.Model("/nonexistent/model.gguf")
    assert "/nonexistent/model.gguf" in str(e.value)
    assert e.value.status == "bad model file"
    session = engine.Session(model, n_ctx=16)
    with pytest.raises(engine.EngineError, match="outside the vocabulary") as e:
        session.decode(model.n_vocab)
    assert e.value.status == "invalid argument"
    with pytest.raises(ValueError, match="kv_type"):
        engine.Session(model, kv_type="q3")


def test_logits_are_a_read_only_view_of_the_engines_buffer(model):
    session = engine.Session(model, n_ctx=64)
    session.prefill(model.tokenize("Once upon"))
    view = session.logits
    assert view.shape == (model.n_vocab,) and view.dtype == np.float32
    assert not view.flags.writeable and not view.flags.owndata
    before = view.copy()
    session.decode(int(np.argmax(view)))
    # The same memory, overwritten by the next evaluation: no copy was made.
    assert not np.array_equal(view, before)
    assert np.array_equal(view, session.logits)
    with pytest.raises(ValueError):
        view[0] = 1.0
    del session  # the view keeps the session alive
    assert np.isfinite(view).all()


def test_a_second_turn_evaluates_only_its_new_tokens(model):
    session = engine.Session(model, n_ctx=256)
    first = model.tokenize("Once upon a time, there was a cat.")
    assert session.prefill_prompt(first) == 0
    assert session.n_evaluated == len(first)
    reply = list(engine.generate(session, first, 8))
    assert reply
    held = session.tokens
    assert held[: len(first)] == first and len(held) > len(first)  # the prompt and the reply
    second = held + model.tokenize(" The cat was happy.", add_bos=False)
    evaluated = session.n_evaluated
    reused = session.prefill_prompt(second)
    assert reused == len(held)
    assert session.n_evaluated - evaluated == len(second) - reused
    # Regenerate: drop the reply and its continuation, keep the first prompt.
    session.truncate(len(first))
    assert session.tokens == first


def test_saved_sessions_restore_the_prompt(model, tmp_path):
    prompt = model.tokenize("Lily liked to play in the park with her friends.")
    session = engine.Session(model, n_ctx=128)
    session.prefill(prompt)
    want = session.logits.copy()
    path = str(tmp_path / "prompt.session")
    session.save(path)
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    restored = engine.Session(model, n_ctx=128)
    restored.load(path)
    assert restored.tokens == prompt
    assert restored.prefill_prompt(prompt) == len(prompt) - 1  # the last token again, for its logits
    np.testing.assert_allclose(restored.logits, want, rtol=1e-5, atol=1e-5)
    with pytest.raises(engine.EngineError, match="not a saved session"):
        (tmp_path / "other").write_bytes(b"x" * 100)
        restored.load(str(tmp_path / "other"))


def test_abort_from_another_thread_stops_a_prefill_at_a_whole_token(model):
    session = engine.Session(model, n_ctx=2048, n_batch=8, n_threads=1)
    prompt = [model.bos] + [(i * 37) % 500 + 3 for i in range(2000)]
    done = threading.Event()

    def keep_stopping():
        while not done.is_set():
            session.abort()

    stopper = threading.Thread(target=keep_stopping)
    stopper.start()
    aborted = None
    try:
        # A few tries: on a loaded machine the stopper may not get a core
        # before a whole prefill (tens of milliseconds here) is done.
        for _ in range(5):
            session.reset()
            try:
                session.prefill(prompt)
            except engine.EngineError as e:
                aborted = e
                break
    finally:
        done.set()
        stopper.join()
    assert aborted is not None, "no prefill was stopped"
    assert aborted.status == "aborted", str(aborted)
    assert session.n_past < len(prompt) and session.n_past % 8 == 0
    kept = session.n_past
    session.prefill([5])  # the next call works, after the kept tokens
    assert session.n_past == kept + 1


def test_sessions_on_one_model_in_two_threads_agree(model):
    results = [None, None]

    def run(i):
        results[i] = model.generate("Once upon a time", max_tokens=40, n_threads=1)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results[0] == results[1] == model.generate("Once upon a time", max_tokens=40)


def test_streamed_chats_on_one_model_in_three_threads_agree(model):
    # Three Python threads, each a two-turn streamed chat whose session runs
    # two pool threads: the GIL is released during evaluation and taken back
    # for every piece. The TSan tree runs this file too (python_binding_test@tsan).
    def conversation():
        chat = engine.Chat(model, system="Stories.", n_ctx=512, n_threads=2)
        return ["".join(chat.say(text, max_tokens=16, stream=True)) for text in ("A cat?", "And a dog?")]

    results = [None] * 3

    def run(i):
        results[i] = conversation()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results[0] == results[1] == results[2] == conversation()


def test_seeded_sampling_repeats_and_streams_whole_characters(model):
    a = model.generate("Once", max_tokens=30, temperature=0.9, seed=7)
    b = "".join(model.generate("Once", max_tokens=30, temperature=0.9, seed=7, stream=True))
    assert a == b
    assert "\ufffd" not in a


def test_render_chat_with_a_builtin_template(model):
    assert "chatml" in engine.builtin_chat_templates()
    prompt = model.render_chat([{"role": "user", "content": "Hi"}], template="chatml")
    assert prompt == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    with pytest.raises(engine.EngineError):
        model.render_chat([{"role": "user", "content": "Hi"}], template="no-such-template")
    with pytest.raises(TypeError):
        model.render_chat(["not a message"])


def test_a_chat_turn_evaluates_only_its_new_messages(model):
    session = engine.Session(model, n_ctx=1024)
    sampler = engine.Sampler(temperature=0)
    messages = [{"role": "system", "content": "You tell stories."}, {"role": "user", "content": "A cat?"}]
    first_prompt, reused = session.prefill_chat(messages)
    assert reused == 0 and session.n_evaluated == first_prompt
    reply = session.generate(sampler, max_tokens=12)
    assert reply["text"] and reply["reason"] in ("max_tokens", "end_of_generation")
    messages += [{"role": "assistant", "content": reply["text"]}, {"role": "user", "content": "And a dog?"}]
    before = session.n_evaluated
    prompt, reused = session.prefill_chat(messages)
    assert reused >= first_prompt
    assert session.n_evaluated - before == prompt - reused


def test_chat_streams_the_same_reply_and_keeps_the_conversation(model):
    whole = engine.Chat(model, system="Stories.", n_ctx=1024).say("Tell one.", max_tokens=24)
    chat = engine.Chat(model, system="Stories.", n_ctx=1024)
    pieces = list(chat.say("Tell one.", max_tokens=24, stream=True))
    assert "".join(pieces) == whole
    assert [m["role"] for m in chat.messages] == ["system", "user", "assistant"]
    # A stream closed after its first piece stops the reply; the next turn works.
    stream = chat.say("Another.", max_tokens=200, stream=True)
    next(stream)
    stream.close()
    assert chat.messages[-1]["role"] == "assistant"
    assert chat.say("Short.", max_tokens=4) is not None
    assert chat.last_prompt[1] > 0


def test_stop_strings_end_the_reply_before_them(model):
    full = model.generate("Once upon a time", max_tokens=60)
    cut = full.index(" she") if " she" in full else full.index(",")
    stop = " she" if " she" in full else ","
    assert model.generate("Once upon a time", max_tokens=60, stop=[stop]) == full[:cut]


def test_an_exception_in_the_callback_stops_the_reply_and_is_raised(model):
    session = engine.Session(model, n_ctx=128)
    session.prefill(model.tokenize("Once"))

    def boom(text):
        raise KeyError("from the callback")

    with pytest.raises(KeyError, match="from the callback"):
        session.generate(engine.Sampler(temperature=0), 20, [], boom)


def test_load_progress_cancel_and_repack_cache(tmp_path):
    seen = []
    model = engine.Model(MODEL, progress=lambda fraction, phase: seen.append((fraction, phase)) is None)
    assert seen[-1] == (1.0, "done")
    assert [f for f, _ in seen] == sorted(f for f, _ in seen)
    assert model.load_stats["cache"] == "off"
    with pytest.raises(engine.EngineError) as cancelled:
        engine.Model(MODEL, progress=lambda fraction, phase: False)
    assert cancelled.value.status == "cancelled"
    with pytest.raises(ZeroDivisionError):  # the callback's own exception cancels and is raised
        engine.Model(MODEL, progress=lambda fraction, phase: 1 / 0)
    first = engine.Model(MODEL, cache_dir=tmp_path).load_stats["cache"]
    if first == "off":
        pytest.skip("no kernel of this CPU repacks the model's weights")
    assert first == "written"
    assert engine.Model(MODEL, cache_dir=tmp_path).load_stats["cache"] == "hit"


def test_a_json_schema_gives_a_document_it_validates(model):
    import json
    schema = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 10},
                                               "age": {"type": "integer"}}, "required": ["name", "age"]}
    sampler = engine.Sampler(seed=5)
    sampler.set_json_schema(model, json.dumps(schema))
    session = engine.Session(model, n_ctx=256)
    session.prefill_chat([{"role": "user", "content": "Who is Lily?"}])
    reply = session.generate(sampler, max_tokens=120)
    assert reply["reason"] == "end_of_generation", reply
    doc = json.loads(reply["text"])
    assert list(doc) == ["name", "age"] and len(doc["name"]) <= 10 and isinstance(doc["age"], int), doc

    sampler.set_grammar(model, 'root ::= " " ("yes" | "no") "."')
    session = engine.Session(model, n_ctx=256)
    session.prefill(model.tokenize("Is the cat happy? Answer:", True))
    assert session.generate(sampler, max_tokens=20)["text"] in (" yes.", " no.")

    with pytest.raises(engine.EngineError, match="line 1, column 14: rule 'value' is used but not defined"):
        sampler.set_grammar(model, 'root ::= "{" value')
    with pytest.raises(engine.EngineError, match="the keyword 'pattern' is not supported"):
        sampler.set_json_schema(model, '{"type": "string", "pattern": "a+"}')
    sampler.clear_grammar()


def test_a_replys_tool_calls_come_back(model):
    import json
    reply = 'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    parsed = model.parse_tool_calls(reply)  # the built-in ChatML's format: <tool_call> blocks
    assert parsed["format"] == "hermes" and parsed["content"] == "Checking."
    assert [(c["name"], json.loads(c["arguments"])) for c in parsed["tool_calls"]] == [("get_weather", {"city": "Paris"})]
    assert model.parse_tool_calls("[TOOL_CALLS]f[ARGS]{}", format="mistral")["tool_calls"][0]["name"] == "f"
    with pytest.raises(engine.EngineError, match="unknown tool-call format 'xml'"):
        model.parse_tool_calls(reply, format="xml")
    tools = [{"type": "function", "function": {"name": "add", "parameters": {
        "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}}]
    sampler = engine.Sampler(seed=2)
    sampler.set_tool_grammar(model, json.dumps(tools))
    session = engine.Session(model, n_ctx=1024)
    session.prefill_chat([{"role": "user", "content": "Add 2 and 3."}])
    reply = session.generate(sampler, max_tokens=600)
    call, = model.parse_tool_calls(reply["text"])["tool_calls"]
    args = json.loads(call["arguments"])
    assert call["name"] == "add" and isinstance(args["a"], int) and isinstance(args["b"], int), reply

