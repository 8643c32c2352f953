#include "thaw/common/properties.h"

#include <cctype>
#include <map>
#include <sstream>

#include <fmt/format.h>

namespace thaw {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\f'; }

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xC0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *out += static_cast<char>(0xE0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Unescapes s[*i..] up to (not including) a character for which stop() holds
// outside an escape; advances *i past what it read.
template <typename Stop>
Result<std::string> Unescape(const std::string& s, size_t* i, Stop stop, const std::string& where) {
  std::string out;
  while (*i < s.size()) {
    char c = s[*i];
    if (c != '\\') {
      if (stop(c)) break;
      out += c;
      ++*i;
      continue;
    }
    if (*i + 1 >= s.size()) {
      ++*i;
      break;  // a lone trailing backslash (continuations are joined already)
    }
    char n = s[*i + 1];
    *i += 2;
    switch (n) {
      case 't': out += '\t'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 'f': out += '\f'; break;
      case 'u': {
        uint32_t cp = 0;
        if (*i + 4 > s.size()) return Status::Invalid("{}: \\u needs four hex digits", where);
        for (int k = 0; k < 4; ++k) {
          char h = s[*i + k];
          int v = h >= '0' && h <= '9'   ? h - '0'
                  : h >= 'a' && h <= 'f' ? h - 'a' + 10
                  : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                         : -1;
          if (v < 0) return Status::Invalid("{}: \\u needs four hex digits, not '{}'", where, s.substr(*i, 4));
          cp = cp * 16 + static_cast<uint32_t>(v);
        }
        *i += 4;
        AppendUtf8(cp, &out);
        break;
      }
      default: out += n;
    }
  }
  return out;
}

// `org.apache...PlainLoginModule required username="u" password="p";` ->
// sasl.username / sasl.password.
Status TranslateJaas(const std::string& jaas, const std::string& where,
                     std::vector<std::pair<std::string, std::string>>* out) {
  std::istringstream in(jaas);
  std::string module;
  in >> module;
  const bool plain = module.ends_with("PlainLoginModule"), scram = module.ends_with("ScramLoginModule");
  if (!plain && !scram) {
    return Status::Invalid("{}: sasl.jaas.config with {} has no librdkafka equivalent; give librdkafka's sasl.* "
                           "properties instead (e.g. sasl.mechanism, sasl.oauthbearer.*, sasl.kerberos.*)",
                           where, module.empty() ? std::string("no login module") : module);
  }
  std::map<std::string, std::string> opts;
  size_t i = jaas.find(module) + module.size();
  while (i < jaas.size()) {
    while (i < jaas.size() && (std::isspace(static_cast<unsigned char>(jaas[i])) || jaas[i] == ';')) ++i;
    size_t eq = jaas.find('=', i);
    if (eq == std::string::npos) break;  // "required"/"optional" and the end
    std::string key = jaas.substr(i, eq - i);
    if (auto sp = key.find_last_of(" \t"); sp != std::string::npos) key = key.substr(sp + 1);  // after "required"
    i = eq + 1;
    std::string value;
    if (i < jaas.size() && jaas[i] == '"') {
      size_t close = jaas.find('"', i + 1);
      if (close == std::string::npos) return Status::Invalid("{}: sasl.jaas.config has an unclosed quote", where);
      value = jaas.substr(i + 1, close - i - 1);
      i = close + 1;
    } else {
      size_t end = jaas.find_first_of(" \t;", i);
      value = jaas.substr(i, end == std::string::npos ? std::string::npos : end - i);
      i = end == std::string::npos ? jaas.size() : end;
    }
    opts[key] = value;
  }
  if (!opts.count("username") || !opts.count("password")) {
    return Status::Invalid("{}: sasl.jaas.config with {} needs username=\"...\" and password=\"...\"", where, module);
  }
  out->emplace_back("sasl.username", opts["username"]);
  out->emplace_back("sasl.password", opts["password"]);
  return Status::OK();
}

}  // namespace

Result<std::vector<std::pair<std::string, std::string>>> ParseProperties(std::string_view text,
                                                                        std::string_view source) {
  std::istringstream in{std::string(text)};
  std::vector<std::pair<std::string, std::string>> out;
  std::string raw;
  int lineno = 0;
  while (std::getline(in, raw)) {
    ++lineno;
    const int first_line = lineno;
    auto strip_cr = [](std::string* s) {
      if (!s->empty() && s->back() == '\r') s->pop_back();
    };
    strip_cr(&raw);
    size_t b = 0;
    while (b < raw.size() && IsSpace(raw[b])) ++b;
    if (b == raw.size() || raw[b] == '#' || raw[b] == '!') continue;
    // Join continuation lines: an odd number of trailing backslashes.
    std::string line = raw.substr(b);
    auto continues = [](const std::string& s) {
      size_t n = 0;
      while (n < s.size() && s[s.size() - 1 - n] == '\\') ++n;
      return n % 2 == 1;
    };
    while (continues(line)) {
      line.pop_back();
      std::string next;
      if (!std::getline(in, next)) break;
      ++lineno;
      strip_cr(&next);
      size_t nb = 0;
      while (nb < next.size() && IsSpace(next[nb])) ++nb;
      line += next.substr(nb);
    }
    const std::string where = fmt::format("{} line {}", source, first_line);
    size_t i = 0;
    ASSIGN_OR_RAISE(std::string key,
                    Unescape(line, &i, [](char c) { return c == '=' || c == ':' || IsSpace(c); }, where));
    while (i < line.size() && IsSpace(line[i])) ++i;
    if (i < line.size() && (line[i] == '=' || line[i] == ':')) ++i;
    while (i < line.size() && IsSpace(line[i])) ++i;
    ASSIGN_OR_RAISE(std::string value, Unescape(line, &i, [](char) { return false; }, where));
    if (key.empty()) return Status::Invalid("{}: '{}' has no property name (expected name=value)", where, line);
    if (key == "sasl.jaas.config") {
      RETURN_NOT_OK(TranslateJaas(value, where, &out));
      continue;
    }
    out.emplace_back(std::move(key), std::move(value));
  }
  return out;
}

}  // namespace thaw
