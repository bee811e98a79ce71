package dev.engine;

import java.util.Collections;
import java.util.List;

/** A reply read back into its tool calls (Model.parseToolCalls): the text around them, the calls, the format read. */
public final class ParsedReply {
  public final String content;
  public final List<Message.ToolCall> toolCalls;
  public final String format;

  ParsedReply(String content, List<Message.ToolCall> toolCalls, String format) {
    this.content = content;
    this.toolCalls = Collections.unmodifiableList(toolCalls);
    this.format = format;
  }
}
