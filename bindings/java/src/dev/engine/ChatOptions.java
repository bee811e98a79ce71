package dev.engine;

/**
 * How a conversation becomes a prompt (engine_chat_params): the model's chat
 * template unless a built-in one is named (Model.builtinChatTemplates()) or a
 * Jinja text of the app's own is given; tools and further template variables
 * as JSON texts.
 */
public final class ChatOptions {
  String templateName;
  String templateText;
  String tools;
  String variables;
  boolean addGenerationPrompt = true;

  /** A built-in template by name ("chatml", "llama3", "gemma", "phi3"); null: the model's. */
  public ChatOptions template(String name) {
    templateName = name;
    return this;
  }

  /** A Jinja template of the app's own, used over both. */
  public ChatOptions templateText(String jinja) {
    templateText = jinja;
    return this;
  }

  /** A JSON array of tool schemas (OpenAI's "function" shape). */
  public ChatOptions tools(String json) {
    tools = json;
    return this;
  }

  /** A JSON object of further template variables, e.g. {"enable_thinking": false}. */
  public ChatOptions variables(String json) {
    variables = json;
    return this;
  }

  /** Open the assistant's turn at the end (true by default). */
  public ChatOptions addGenerationPrompt(boolean add) {
    addGenerationPrompt = add;
    return this;
  }

  byte[][] strings() {
    return new byte[][] {Native.utf8(templateName), Native.utf8(templateText), Native.utf8(tools), Native.utf8(variables)};
  }
}
