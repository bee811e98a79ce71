"""On-device LLM inference engine: GGUF models on ARM and x86 CPUs.

The classes come from the native module (engine._engine, over the C API);
this file adds generation and multi-turn chat with streaming.

    import engine
    model = engine.Model("models/stories260K.gguf")
    print(model.generate("Once upon a time", max_tokens=32))

    chat = engine.Chat(model, system="You are terse.")
    for piece in chat.say("Hello!", stream=True):
        print(piece, end="", flush=True)
"""

import queue
import threading

from ._engine import EngineError, Model, Sampler, Session, __version__, builtin_chat_templates

__all__ = ["Chat", "EngineError", "Model", "Sampler", "Session", "__version__", "builtin_chat_templates",
           "generate"]


def _sampler(temperature, top_k, top_p, min_p, seed):
    return Sampler(temperature=temperature, top_k=top_k, top_p=top_p, min_p=min_p, seed=seed)


def _stream(session, run):
    """Runs run(on_text) in a thread and yields the pieces it streams. Closing
    the iterator early stops the generation (on_text says stop; abort() stops
    an evaluation under way) and waits for it."""
    pieces = queue.Queue()
    closed = threading.Event()
    end = object()

    def on_text(text):
        pieces.put(text)
        return not closed.is_set()

    def work():
        try:
            run(on_text)
        except BaseException as e:  # handed to the reader
            pieces.put(e)
        finally:
            pieces.put(end)

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    try:
        while True:
            item = pieces.get()
            if item is end:
                break
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        if worker.is_alive():
            closed.set()
            session.abort()
        worker.join()


def _reply(session, sampler, max_tokens, stop, stream):
    stop = list(stop)
    if not stream:
        return session.generate(sampler, max_tokens, stop)["text"]
    return _stream(session, lambda on_text: session.generate(sampler, max_tokens, stop, on_text))


def generate(session, prompt_tokens, max_tokens, sampler=None, stop=(), stream=False):
    """Generates up to max_tokens tokens after prompt_tokens, which the session
    evaluates with prefill_prompt (so the tokens it already holds at their
    start are reused): the text, or with stream=True an iterator of its
    pieces (whole UTF-8 characters). It ends at an end-of-generation token or
    a stop string (neither is part of the text). Greedy without a sampler."""
    sampler = sampler if sampler is not None else Sampler(temperature=0)
    for t in prompt_tokens:
        sampler.accept(t)
    session.prefill_prompt(list(prompt_tokens))
    return _reply(session, sampler, max_tokens, stop, stream)


def _model_generate(self, prompt, max_tokens=128, temperature=0.0, top_k=0, top_p=1.0, min_p=0.0, seed=0xFFFFFFFF,
                    stop=(), stream=False, n_ctx=0, n_threads=0):
    """Generates after prompt (text, tokenized with BOS, or a list of token ids)
    in a new session: the text, or with stream=True an iterator of its pieces."""
    tokens = self.tokenize(prompt) if isinstance(prompt, str) else list(prompt)
    session = Session(self, n_ctx=n_ctx, n_threads=n_threads)
    return generate(session, tokens, max_tokens, _sampler(temperature, top_k, top_p, min_p, seed), stop, stream)


def _model_chat(self, messages, max_tokens=512, temperature=0.0, top_k=0, top_p=1.0, min_p=0.0, seed=0xFFFFFFFF,
                stop=(), stream=False, template="", tools=None, variables=None, n_ctx=0, n_threads=0):
    """The assistant's reply to messages (dicts with "role" and "content"),
    rendered with the model's chat template (or a built-in one by name), in a
    new session: the text, or with stream=True an iterator of its pieces. For
    several turns on one session, use engine.Chat."""
    session = Session(self, n_ctx=n_ctx, n_threads=n_threads)
    session.prefill_chat(list(messages), template, tools, variables)
    return _reply(session, _sampler(temperature, top_k, top_p, min_p, seed), max_tokens, stop, stream)


Model.generate = _model_generate
Model.chat = _model_chat


class Chat:
    """A multi-turn chat on one session: each turn evaluates only what the
    session does not hold yet (the previous turns stay in its KV cache).

    messages: the conversation so far (the replies included); last_prompt:
    (prompt tokens, reused tokens) of the last turn."""

    def __init__(self, model, system=None, template="", tools=None, variables=None, n_ctx=0, n_threads=0,
                 temperature=0.0, top_k=0, top_p=1.0, min_p=0.0, seed=0xFFFFFFFF):
        self.session = Session(model, n_ctx=n_ctx, n_threads=n_threads)
        self.sampler = _sampler(temperature, top_k, top_p, min_p, seed)
        self.messages = [{"role": "system", "content": system}] if system else []
        self.last_prompt = (0, 0)
        self._options = (template, tools, variables)

    def say(self, text, max_tokens=512, stop=(), stream=False):
        """The user's message in, the assistant's reply out (or with
        stream=True an iterator of its pieces; the reply joins the
        conversation when the iterator ends, however it ends)."""
        self.messages.append({"role": "user", "content": text})
        try:
            self.last_prompt = self.session.prefill_chat(self.messages, *self._options)
        except BaseException:
            self.messages.pop()
            raise
        if not stream:
            reply = self.session.generate(self.sampler, max_tokens, list(stop))["text"]
            self.messages.append({"role": "assistant", "content": reply})
            return reply
        return self._streamed(max_tokens, stop)

    def _streamed(self, max_tokens, stop):
        parts = []
        try:
            for piece in _reply(self.session, self.sampler, max_tokens, stop, True):
                parts.append(piece)
                yield piece
        finally:
            self.messages.append({"role": "assistant", "content": "".join(parts)})

    def reset(self):
        """Forgets the conversation but the system prompt (whose KV stays)."""
        self.messages = [m for m in self.messages[:1] if m["role"] == "system"]
