package dev.engine;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * A multi-turn chat on a session of its own: the conversation as messages,
 * rendered by the model's chat template (or a built-in one) each turn, which
 * evaluates only what the session does not hold yet: the previous turns stay
 * in its KV cache. Closing it closes its session and sampler.
 */
public final class Chat implements AutoCloseable {
  private final Session session;
  private final Sampler sampler;
  private final ChatOptions options;
  private final List<Message> messages = new ArrayList<Message>();
  private ChatPrompt lastPrompt = new ChatPrompt(0, 0);
  private int maxTokens = 512;
  private List<String> stop = Collections.emptyList();

  /** Greedy, with the model's template, no system prompt. */
  public Chat(Model model) {
    this(model, null, new ChatOptions(), new Session.Params(), Sampler.Params.greedy());
  }

  public Chat(Model model, String systemPrompt) {
    this(model, systemPrompt, new ChatOptions(), new Session.Params(), Sampler.Params.greedy());
  }

  public Chat(Model model, String systemPrompt, ChatOptions options, Session.Params sessionParams,
      Sampler.Params samplerParams) {
    this.options = options;
    this.session = new Session(model, sessionParams);
    try {
      this.sampler = new Sampler(samplerParams);
    } catch (RuntimeException e) {
      session.close();
      throw e;
    }
    if (systemPrompt != null && !systemPrompt.isEmpty()) messages.add(Message.system(systemPrompt));
  }

  /** The most tokens of a reply (512 by default; 0: until the context is full). */
  public Chat maxTokens(int n) {
    maxTokens = Native.unsigned("maxTokens", n);
    return this;
  }

  /** Strings that end a reply (not part of it). */
  public Chat stop(String... strings) {
    stop = Arrays.asList(strings.clone());
    return this;
  }

  /** The user's message in, the assistant's reply out. */
  public Reply say(String text) {
    return say(text, null);
  }

  /**
   * The user's message in, the assistant's reply out, streamed to onText (may
   * be null). The reply joins the conversation however it ends (also when
   * abort() stops it: the text so far); a failed prompt takes the message out
   * again.
   */
  public Reply say(String text, TextCallback onText) {
    messages.add(Message.user(text));
    try {
      lastPrompt = session.prefillChat(messages, options);
    } catch (RuntimeException e) {
      messages.remove(messages.size() - 1);
      throw e;
    }
    return reply(onText);
  }

  /** A reply to the conversation as it stands (e.g. after a tool result was added to messages()). */
  public Reply respond(TextCallback onText) {
    lastPrompt = session.prefillChat(messages, options);
    return reply(onText);
  }

  private Reply reply(TextCallback onText) {
    Native.TextSink sink = new Native.TextSink(onText);
    try {
      return session.generateInto(sampler, maxTokens, stop, sink);
    } finally {
      messages.add(Message.assistant(sink.text.toString()));
    }
  }

  /** From another thread: stops the turn under way (it throws EngineException, status ABORTED). */
  public void abort() {
    session.abort();
  }

  /** The conversation so far, replies included; may be edited between turns. */
  public List<Message> messages() {
    return messages;
  }

  /** The last turn's prefill: its prompt's tokens and those reused from the session. */
  public ChatPrompt lastPrompt() {
    return lastPrompt;
  }

  /** The chat's session (its counters, save and load). */
  public Session session() {
    return session;
  }

  /** The chat's sampler (a grammar or JSON Schema for its replies). */
  public Sampler sampler() {
    return sampler;
  }

  /** Forgets the conversation but the system prompt (whose KV stays for the next turn). */
  public void reset() {
    List<Message> kept = new ArrayList<Message>();
    if (!messages.isEmpty() && messages.get(0).role.equals("system")) kept.add(messages.get(0));
    messages.clear();
    messages.addAll(kept);
  }

  @Override
  public void close() {
    session.close();
    sampler.close();
  }
}
