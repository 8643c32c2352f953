#include "thaw/cli/config_file.h"

#include <unistd.h>

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace thaw::cli {

namespace {

// Vectors (-X, --partitions, archive's --topic): each occurrence adds.
bool Repeatable(const CLI::Option& opt) {
  return opt.get_items_expected_max() > 1 || opt.get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll;
}

struct Expander {
  const std::string& path;
  const CLI::App& command;
  ExpandedArgs* out;
  // For each of out->args, the setting (one key of one file) it came from.
  std::vector<int>* settings;
  int* next_setting;

  Status Setting(const std::string& key, const toml::node& v, const toml::source_region& key_src) {
    RETURN_NOT_OK(SettingArgs(key, v, key_src));
    settings->resize(out->args.size(), (*next_setting)++);
    return Status::OK();
  }

  std::string Where(const toml::source_region& src, const std::string& key) const {
    return fmt::format("--config {} line {} key '{}'", path, src.begin.line, key);
  }

  // A TOML scalar as the text a command-line flag would carry.
  Result<std::string> Scalar(const toml::node& v, const std::string& where) const {
    if (auto s = v.as_string()) return s->get();
    if (auto i = v.as_integer()) return std::to_string(i->get());
    if (auto f = v.as_floating_point()) {
      if (!std::isfinite(f->get())) return Status::Invalid("{}: {} is not a usable number", where, f->get());
      return fmt::format("{}", f->get());
    }
    if (auto b = v.as_boolean()) return std::string(b->get() ? "true" : "false");
    if (auto d = v.as_date()) return fmt::format("{:04}-{:02}-{:02}", d->get().year, d->get().month, d->get().day);
    if (auto dt = v.as_date_time()) {
      const auto& x = dt->get();
      std::string s = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:09}", x.date.year, x.date.month, x.date.day,
                                  x.time.hour, x.time.minute, x.time.second, x.time.nanosecond);
      if (x.offset) {
        const int m = x.offset->minutes;
        s += fmt::format("{}{:02}:{:02}", m < 0 ? '-' : '+', std::abs(m) / 60, std::abs(m) % 60);
      }
      return s;  // no offset: UTC, as on the command line
    }
    std::ostringstream type;
    type << v.type();
    return Status::Invalid("{}: expected a string, number, boolean, date or date-time, not a {}", where, type.str());
  }

  void Emit(const std::string& flag, const std::string& value, const std::string& where) {
    if (flag.size() == 2) {  // -X: the value attached, so that one starting with '-' stays a value
      out->args.push_back(flag + value);
    } else {
      out->args.push_back(flag + "=" + value);
    }
    out->origins.emplace_back(flag, where);
  }

  // [catalog]: catalog properties; nested tables (unquoted dotted keys,
  // s3.endpoint = "...") are joined with '.'.
  Status CatalogProperties(const toml::table& t, const std::string& prefix) {
    const std::string flag(kConfigCatalogPropertyFlag);
    if (!command.get_option_no_throw(flag)) {
      return Status::Invalid("{}: `thaw {}` reads no catalog, so a [catalog] table does not apply to it",
                             Where(t.source(), "catalog"), command.get_name());
    }
    for (const auto& [k, v] : t) {
      const std::string key = prefix + std::string(k.str());
      if (auto sub = v.as_table()) {
        RETURN_NOT_OK(CatalogProperties(*sub, key + "."));
        continue;
      }
      const std::string where = Where(k.source(), "catalog." + key);
      if (v.is_array()) return Status::Invalid("{}: a catalog property takes one value, not an array", where);
      ASSIGN_OR_RAISE(std::string s, Scalar(v, where));
      Emit(flag, key + "=" + s, where);
    }
    return Status::OK();
  }

  // [upstream] (serve): bootstrap = "HOST:PORT,..." (--upstream), and the
  // options that go with it: broker-ports, cold-suffix, X, F.
  Status UpstreamTable(const toml::table& t) {
    if (!command.get_option_no_throw("--upstream")) {
      return Status::Invalid("{}: `thaw {}` has no upstream, so an [upstream] table does not apply to it",
                             Where(t.source(), "upstream"), command.get_name());
    }
    for (const auto& [k, v] : t) {
      const std::string key(k.str());
      if (key == "bootstrap") {
        RETURN_NOT_OK(SettingArgs("upstream", v, k.source()));
      } else if (key == "broker-ports" || key == "cold-suffix" || key == "X" || key == "F") {
        RETURN_NOT_OK(SettingArgs(key, v, k.source()));
      } else {
        return Status::Invalid("{}: [upstream] takes bootstrap, broker-ports, cold-suffix, X and F, not '{}'",
                               Where(k.source(), "upstream." + key), key);
      }
    }
    return Status::OK();
  }

  Status SettingArgs(const std::string& key, const toml::node& v, const toml::source_region& key_src) {
    const std::string where = Where(key_src, key);
    if (key == "config") return Status::Invalid("{}: a --config file cannot name another", where);
    if (key == "catalog" && v.is_table()) return CatalogProperties(*v.as_table(), "");
    if (key == "upstream" && v.is_table()) return UpstreamTable(*v.as_table());
    const std::string flag = key.size() == 1 ? "-" + key : "--" + key;
    const CLI::Option* opt = key == "help" ? nullptr : command.get_option_no_throw(flag);
    if (!opt) {
      return Status::Invalid(
          "{}: `thaw {}` has no option {} (keys are the long options of `thaw {} --help` "
          "without the dashes)",
          where, command.get_name(), flag, command.get_name());
    }
    if (opt->get_expected_min() == 0) {  // a flag: true or false
      auto b = v.as_boolean();
      if (!b) return Status::Invalid("{}: {} is a flag; give true or false", where, flag);
      if (b->get()) {
        out->args.push_back(flag);
      } else {
        out->args.push_back(flag + "=false");
      }
      out->origins.emplace_back(flag, where);
      return Status::OK();
    }
    const bool repeatable = Repeatable(*opt);
    if (v.is_array() || v.is_table()) {
      if (!repeatable) {
        return Status::Invalid("{}: {} takes one value, not {}", where, flag, v.is_array() ? "an array" : "a table");
      }
      if (auto arr = v.as_array(); arr && !arr->empty() && arr->is_array_of_tables()) {
        // [[topic]] tables (serve): name = "orders", table = "archive.orders",
        // then any of layout, compression, column, source_topic -> --topic orders=archive.orders:layout=...
        for (const auto& e : *arr) {
          const toml::table& t = *e.as_table();
          const std::string at = Where(e.source(), "[[" + key + "]]");
          auto name = t["name"].value<std::string>();
          auto table = t["table"].value<std::string>();
          if (!name || !table)
            return Status::Invalid("{}: each [[{}]] needs name = \"...\" and table = \"NS.TABLE\"", at, key);
          std::string value = *name + "=" + *table;
          for (const auto& [k, x] : t) {
            const std::string field(k.str());
            if (field == "name" || field == "table") continue;
            if (auto list = x.as_array()) {
              for (const auto& item : *list) {
                ASSIGN_OR_RAISE(std::string s, Scalar(item, Where(item.source(), key + "." + field)));
                value += ":" + field + "=" + s;
              }
              continue;
            }
            ASSIGN_OR_RAISE(std::string s, Scalar(x, Where(k.source(), key + "." + field)));
            value += ":" + field + "=" + s;
          }
          Emit(flag, value, at);
        }
      } else if (auto arr = v.as_array()) {
        for (const auto& e : *arr) {
          ASSIGN_OR_RAISE(std::string s, Scalar(e, Where(e.source(), key)));
          Emit(flag, s, Where(e.source(), key));
        }
      } else {
        // { "acks" = "all" } -> acks=all, for name=value options (-X, --topic-config, --column).
        for (const auto& [k, e] : *v.as_table()) {
          ASSIGN_OR_RAISE(std::string s, Scalar(e, Where(k.source(), key + "." + std::string(k.str()))));
          Emit(flag, std::string(k.str()) + "=" + s, Where(k.source(), key + "." + std::string(k.str())));
        }
      }
      return Status::OK();
    }
    ASSIGN_OR_RAISE(std::string s, Scalar(v, where));
    Emit(flag, s, where);
    return Status::OK();
  }

  // A top-level key this command has no use for but another command has
  // (one file serves every command; each takes the keys it knows). An
  // array of tables ([[topic]]) belongs to a command whose option repeats.
  bool ForAnotherCommand(const std::string& key, const toml::node& v) const {
    if (key == "config" || key == "help") return false;
    const std::string flag = key.size() == 1 ? "-" + key : "--" + key;
    const auto* arr = v.as_array();
    const bool tables = arr && !arr->empty() && arr->is_array_of_tables();
    const CLI::Option* mine = command.get_option_no_throw(flag);
    if (mine && (!tables || Repeatable(*mine))) return false;
    for (const CLI::App* c : command.get_parent()->get_subcommands([](const CLI::App*) { return true; })) {
      if (c == &command) continue;
      const CLI::Option* theirs = c->get_option_no_throw(flag);
      if (theirs && (!tables || Repeatable(*theirs))) return true;
    }
    return false;
  }

  Status Table(const toml::table& t, bool top) {
    // Keys first, then the command's own [section], which wins over them.
    const toml::table* section = nullptr;
    for (const auto& [k, v] : t) {
      const std::string key(k.str());
      if (top && v.is_table()) {
        bool is_command = false;
        for (const CLI::App* c : command.get_parent()->get_subcommands([](const CLI::App*) { return true; })) {
          if (c->check_name(key)) is_command = true;
        }
        if (is_command) {
          if (command.check_name(key)) section = v.as_table();
          continue;
        }
      }
      if (top && ForAnotherCommand(key, v)) continue;
      RETURN_NOT_OK(Setting(key, v, k.source()));
    }
    if (section) RETURN_NOT_OK(Table(*section, false));
    return Status::OK();
  }
};

Status ReadFile(const std::string& path, const CLI::App& command, ExpandedArgs* out, std::vector<int>* settings,
                int* next_setting) {
  // Read here rather than by toml::parse_file, which needs a seekable file
  // (so that `--config <(...)` works).
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Invalid("--config {}: cannot read the file", path);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::Invalid("--config {}: cannot read the file", path);
  toml::table t;
  try {
    t = toml::parse(text.str(), path);
  } catch (const toml::parse_error& e) {
    return Status::Invalid("--config {} line {} column {}: {}", path, e.source().begin.line, e.source().begin.column,
                           e.description());
  }
  Expander x{path, command, out, settings, next_setting};
  return x.Table(t, true);
}

}  // namespace

std::string ExpandedArgs::Explain(const std::string& message) const {
  auto is_name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; };
  // The last origin of a flag is the one in force (later settings win).
  for (auto it = origins.rbegin(); it != origins.rend(); ++it) {
    for (size_t at = message.find(it->first); at != std::string::npos; at = message.find(it->first, at + 1)) {
      const size_t end = at + it->first.size();
      if ((at == 0 || !is_name_char(message[at - 1])) && (end >= message.size() || !is_name_char(message[end]))) {
        return message + " (set by " + it->second + ")";
      }
    }
  }
  return message;
}

namespace {

// The subcommand of a command line: the first argument naming one, and the
// index just after it.
const CLI::App* FindCommand(const std::vector<std::string>& args, const CLI::App& app, size_t* after) {
  for (size_t at = 1; at < args.size(); ++at) {
    for (const CLI::App* c : app.get_subcommands([](const CLI::App*) { return true; })) {
      if (c->check_name(args[at])) {
        *after = at + 1;
        return c;
      }
    }
  }
  return nullptr;
}

// The options named on a command line from `from` on, in order (a value
// that follows its option is skipped, so "--where -x" is one option).
std::vector<std::pair<const CLI::Option*, std::string>> ScanOptions(const std::vector<std::string>& args, size_t from,
                                                                    const CLI::App& command) {
  std::vector<std::pair<const CLI::Option*, std::string>> out;
  for (size_t i = from; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") break;
    if (a.size() < 2 || a[0] != '-' || std::isdigit(static_cast<unsigned char>(a[1]))) continue;
    std::string name;
    bool attached;
    if (a[1] == '-') {
      const size_t eq = a.find('=');
      name = a.substr(0, eq);
      attached = eq != std::string::npos;
    } else {
      name = a.substr(0, 2);
      attached = a.size() > 2;
    }
    const CLI::Option* opt = command.get_option_no_throw(name);
    if (!opt) continue;
    out.emplace_back(opt, name);
    if (!attached && opt->get_expected_min() > 0) ++i;  // its value
  }
  return out;
}

// name=value options: a file's and the command line's are merged key by
// key, the command line's (later) value winning for a key in both.
bool Keyed(const CLI::Option& opt) {
  for (const char* n : {"-X", "--catalog-property", "--topic-config", "--column"}) {
    if (opt.check_name(n)) return true;
  }
  return opt.check_name(std::string(kConfigCatalogPropertyFlag));
}

}  // namespace

Result<ExpandedArgs> ExpandConfigFiles(const std::vector<std::string>& args, const CLI::App& app) {
  ExpandedArgs out;
  std::vector<std::string> rest;
  std::vector<std::string> files;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--config") {
      if (i + 1 >= args.size()) return Status::Invalid("--config needs a FILE (a TOML file of settings)");
      files.push_back(args[++i]);
    } else if (args[i].rfind("--config=", 0) == 0) {
      files.push_back(args[i].substr(9));
    } else {
      rest.push_back(args[i]);
    }
  }
  size_t at = 0;
  const CLI::App* command = FindCommand(rest, app, &at);
  if (!command) {
    if (!files.empty()) return Status::Invalid("--config applies to a command: thaw replay --config FILE ...");
    out.args = std::move(rest);  // no command (thaw --help, --version): nothing to apply
    return out;
  }
  if (files.empty()) {
    ASSIGN_OR_RAISE(files, DefaultConfigFiles());
  }
  ExpandedArgs from_files;
  std::vector<int> settings;
  int next_setting = 0;
  for (const auto& f : files) RETURN_NOT_OK(ReadFile(f, *command, &from_files, &settings, &next_setting));
  // One source per option, never a merge: the command line wins over the
  // files, a later file or a [command] table over what came before; only
  // name=value options (-X, catalog properties) are merged key by key.
  std::set<const CLI::Option*> on_line;
  for (const auto& given : ScanOptions(rest, at, *command)) on_line.insert(given.first);
  std::vector<const CLI::Option*> opts(from_files.args.size());
  std::map<const CLI::Option*, int> last;
  for (size_t i = 0; i < opts.size(); ++i) {
    opts[i] = command->get_option_no_throw(from_files.origins[i].first);
    last[opts[i]] = std::max(last[opts[i]], settings[i]);
  }
  out.args.assign(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(at));
  for (size_t i = 0; i < opts.size(); ++i) {
    const bool keep = !opts[i] || Keyed(*opts[i]) || (!on_line.count(opts[i]) && settings[i] == last[opts[i]]);
    if (!keep) continue;
    out.args.push_back(std::move(from_files.args[i]));
    out.origins.push_back(std::move(from_files.origins[i]));
  }
  // THAW_<OPTION> environment variables: over the files, under the command
  // line (secrets such as THAW_CATALOG_TOKEN stay out of the process list).
  for (const CLI::Option* opt : command->get_options()) {
    if (opt->get_lnames().empty() || on_line.count(opt)) continue;
    const std::string& name = opt->get_lnames().front();
    if (name == "config" || name == "help") continue;
    const std::string var = EnvName(name);
    const char* value = std::getenv(var.c_str());
    if (!value) continue;
    const std::string flag = "--" + name;
    if (!Keyed(*opt)) {  // the environment replaces the files' setting; name=value options merge
      // out.args: argv up to the command (no origins), then one arg per origin.
      for (size_t j = 0; j < out.origins.size();) {
        if (command->get_option_no_throw(out.origins[j].first) == opt) {
          out.args.erase(out.args.begin() + static_cast<std::ptrdiff_t>(at + j));
          out.origins.erase(out.origins.begin() + static_cast<std::ptrdiff_t>(j));
        } else {
          ++j;
        }
      }
    }
    out.args.push_back(flag + "=" + value);
    out.origins.emplace_back(flag, "environment variable " + var);
  }
  out.args.insert(out.args.end(), rest.begin() + static_cast<std::ptrdiff_t>(at), rest.end());
  return out;
}

std::string EnvName(std::string_view long_name) {
  std::string out = "THAW_";
  for (char c : long_name) out += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

Result<std::vector<std::string>> DefaultConfigFiles() {
  if (const char* path = std::getenv("THAW_CONFIG")) {
    if (*path == '\0') return std::vector<std::string>{};  // THAW_CONFIG= : no file
    return std::vector<std::string>{path};  // must exist: ReadFile says so if not
  }
  std::string dir;
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg == '/') {
    dir = xdg;
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    dir = std::string(home) + "/.config";
  } else {
    return std::vector<std::string>{};
  }
  const std::string path = dir + "/thaw/thaw.toml";
  if (::access(path.c_str(), F_OK) != 0) return std::vector<std::string>{};
  return std::vector<std::string>{path};
}

Status CheckRepeatedOptions(const std::vector<std::string>& args, const CLI::App& app, std::string* command_name) {
  size_t at = 0;
  const CLI::App* command = FindCommand(args, app, &at);
  if (!command) return Status::OK();
  if (command_name) *command_name = command->get_name();
  std::map<const CLI::Option*, int> times;
  for (const auto& [o, name] : ScanOptions(args, at, *command)) {
    if (Repeatable(*o) || ++times[o] < 2) continue;
    // The command's own repeatable options, as examples.
    std::string examples;
    for (const char* n : {"-X", "--partitions", "--catalog-property"}) {
      const CLI::Option* r = command->get_option_no_throw(n);
      if (r && Repeatable(*r) && examples.size() < 20) examples += (examples.empty() ? "" : " or ") + std::string(n);
    }
    return Status::Invalid(
        "{} is given more than once{}: give it once (only options marked repeatable in `thaw {} "
        "--help`{} add up)",
        name, o->get_expected_min() == 0 ? "" : ", and it takes one value", command->get_name(),
        examples.empty() ? "" : ", such as " + examples + ",");
  }
  return Status::OK();
}

void AddConfigOption(CLI::App* command) {
  static std::string ignored;  // ExpandConfigFiles consumes --config before parsing
  command
      ->add_option("--config", ignored,
                   "Read settings from this TOML file (key = value, keys are long options without the dashes; "
                   "options given on the command line win; docs/cli.md)")
      ->type_name("FILE");
}

}  // namespace thaw::cli
