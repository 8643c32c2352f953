#include "thaw/cli/config_file.h"

#include <fstream>

namespace thaw::cli {

namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// A TOML scalar: "string" (with \" \\ \n \t escapes), 'literal', true/false, number.
Result<std::string> Scalar(const std::string& v, const std::string& where) {
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') {
    std::string out;
    for (size_t i = 1; i + 1 < v.size(); ++i) {
      if (v[i] == '\\' && i + 2 < v.size()) {
        char n = v[++i];
        out += n == 'n' ? '\n' : n == 't' ? '\t' : n;
      } else {
        out += v[i];
      }
    }
    return out;
  }
  if (v.size() >= 2 && v.front() == '\'' && v.back() == '\'') return v.substr(1, v.size() - 2);
  if (!v.empty() && (std::isdigit(static_cast<unsigned char>(v[0])) || v[0] == '-' || v == "true" || v == "false")) {
    return v;
  }
  return Status::Invalid("{}: value '{}' is not a TOML string, number or boolean (quote strings)", where, v);
}

Status ReadFile(const std::string& path, std::vector<std::string>* flags) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("--config file '{}' cannot be read", path);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const std::string where = fmt::format("--config {} line {}", path, lineno);
    std::string t = Trim(line);
    if (t.empty() || t[0] == '#') continue;
    if (t[0] == '[') return Status::Invalid("{}: tables ([section]) are not used; write key = value lines", where);
    auto eq = t.find('=');
    if (eq == std::string::npos) return Status::Invalid("{}: expected key = value", where);
    std::string key = Trim(t.substr(0, eq)), value = Trim(t.substr(eq + 1));
    if (key.size() >= 2 && key.front() == '"' && key.back() == '"') key = key.substr(1, key.size() - 2);
    if (key.empty()) return Status::Invalid("{}: empty key", where);
    const std::string flag = key.size() == 1 ? "-" + key : "--" + key;
    std::vector<std::string> values;
    if (!value.empty() && value.front() == '[') {
      if (value.back() != ']') return Status::Invalid("{}: arrays must be on one line", where);
      std::string body = value.substr(1, value.size() - 2);
      // Split on commas outside quotes.
      std::string cur;
      char quote = 0;
      for (char c : body) {
        if (quote) {
          cur += c;
          if (c == quote) quote = 0;
        } else if (c == '"' || c == '\'') {
          quote = c;
          cur += c;
        } else if (c == ',') {
          if (!Trim(cur).empty()) values.push_back(Trim(cur));
          cur.clear();
        } else {
          cur += c;
        }
      }
      if (!Trim(cur).empty()) values.push_back(Trim(cur));
    } else {
      values.push_back(value);
    }
    for (const auto& raw : values) {
      ASSIGN_OR_RAISE(std::string v, Scalar(raw, where));
      if (v == "true") {
        flags->push_back(flag);
      } else if (v == "false") {
        continue;
      } else {
        flags->push_back(flag);
        flags->push_back(v);
      }
    }
  }
  return Status::OK();
}

}  // namespace

Result<std::vector<std::string>> ExpandConfigFiles(const std::vector<std::string>& args) {
  std::vector<std::string> rest, from_files;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--config") {
      if (i + 1 >= args.size()) return Status::Invalid("--config needs a FILE");
      RETURN_NOT_OK(ReadFile(args[++i], &from_files));
    } else if (args[i].rfind("--config=", 0) == 0) {
      RETURN_NOT_OK(ReadFile(args[i].substr(9), &from_files));
    } else {
      rest.push_back(args[i]);
    }
  }
  if (from_files.empty()) return rest;
  // args[0] is the program, args[1] the subcommand.
  std::vector<std::string> out(rest.begin(), rest.begin() + std::min<size_t>(2, rest.size()));
  out.insert(out.end(), from_files.begin(), from_files.end());
  if (rest.size() > 2) out.insert(out.end(), rest.begin() + 2, rest.end());
  return out;
}

}  // namespace thaw::cli
