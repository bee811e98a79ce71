package dev.engine;

import java.util.Collections;
import java.util.List;

/** One message of a conversation: a role ("system", "user", "assistant", "tool", ...) and its content. */
public final class Message {
  public final String role;
  public final String content;
  /** An assistant's tool calls (empty when none). */
  public final List<ToolCall> toolCalls;
  /** A tool result: the call it answers, or null. */
  public final String toolCallId;
  /** A tool result: the tool's name, or null. */
  public final String name;

  public Message(String role, String content) {
    this(role, content, Collections.<ToolCall>emptyList(), null, null);
  }

  public Message(String role, String content, List<ToolCall> toolCalls, String toolCallId, String name) {
    if (role == null) throw new IllegalArgumentException("a message needs a role");
    this.role = role;
    this.content = content == null ? "" : content;
    this.toolCalls = toolCalls == null ? Collections.<ToolCall>emptyList() : Collections.unmodifiableList(toolCalls);
    this.toolCallId = toolCallId;
    this.name = name;
  }

  public static Message system(String content) {
    return new Message("system", content);
  }

  public static Message user(String content) {
    return new Message("user", content);
  }

  public static Message assistant(String content) {
    return new Message("assistant", content);
  }

  @Override
  public String toString() {
    return role + ": " + content;
  }

  /** A call an assistant made: the tool's name and its arguments as a JSON object's text. */
  public static final class ToolCall {
    public final String id;
    public final String name;
    public final String arguments;

    public ToolCall(String id, String name, String arguments) {
      this.id = id;
      this.name = name;
      this.arguments = arguments;
    }
  }
}
