// cli::split_sentences and cli::join_sentences (`edgemt translate
// --split-sentences`): every rule of edgemt/sentences.h in
// English, German and French on caption-like sentences, the cases where a
// dot does not end a sentence, joining translations back, and robustness
// (malformed UTF-8, punctuation only, 100 KB and 1 MB lines in linear time).
//
// Built with tools/cli/sentence_splitter.cc into edgemt_cli_tests
// (tests/CMakeLists.txt).
#include "edgemt/sentences.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace edgemt {
namespace {

// The sentences of `line` as they appear in it, joined by " | ", so that a
// failing CHECK shows exactly where the line was cut.
std::string split(std::string_view line, std::string_view language) {
  std::string out;
  for (const SentenceSpan& span : split_sentences(line, language)) {
    if (!out.empty()) out += " | ";
    out += line.substr(span.begin, span.end - span.begin);
  }
  return out;
}

// Bytes of whitespace (ASCII or one of the Unicode spaces the splitter
// knows) at the start of `text`, 0 if none.
size_t space_prefix(std::string_view text) {
  for (std::string_view space :
       {" ", "\t", "\r", "\v", "\f", "\n", "\u00A0", "\u202F", "\u2007", "\u2009", "\u3000"}) {
    if (text.substr(0, space.size()) == space) return space.size();
  }
  return 0;
}

bool only_spaces(std::string_view text) {
  while (!text.empty()) {
    const size_t length = space_prefix(text);
    if (length == 0) return false;
    text.remove_prefix(length);
  }
  return true;
}

// What every result must be, whatever the input: non-empty spans in order,
// inside the line, with only whitespace before, between and after them,
// and none at all for a blank line.
bool well_formed(std::string_view line, const std::vector<SentenceSpan>& spans) {
  if (spans.empty()) return only_spaces(line);
  size_t previous_end = 0;
  for (const SentenceSpan& span : spans) {
    if (span.begin < previous_end || span.begin >= span.end || span.end > line.size()) {
      return false;
    }
    if (!only_spaces(line.substr(previous_end, span.begin - previous_end))) return false;
    if (space_prefix(line.substr(span.begin)) > 0) return false;  // starts with a space
    previous_end = span.end;
  }
  if (!only_spaces(line.substr(previous_end))) return false;
  // Ends with a space: the last byte before `end` starts a space sequence.
  for (const SentenceSpan& span : spans) {
    for (size_t back = 1; back <= 3 && back <= span.end - span.begin; ++back) {
      if (space_prefix(line.substr(span.end - back, back)) == back) return false;
    }
  }
  return true;
}

// The line without its leading and trailing whitespace, as joining the
// sentences' own texts must give it back.
std::string_view trimmed(std::string_view line, const std::vector<SentenceSpan>& spans) {
  if (spans.empty()) return {};
  return line.substr(spans.front().begin, spans.back().end - spans.front().begin);
}

std::vector<std::string> texts(std::string_view line, const std::vector<SentenceSpan>& spans) {
  std::vector<std::string> out;
  for (const SentenceSpan& span : spans) {
    out.emplace_back(line.substr(span.begin, span.end - span.begin));
  }
  return out;
}

// --- Where sentences end ----------------------------------------------------

TEST_CASE("text/sentence_splitter: captions split at . followed by a capital") {
  CHECK(split("A man is riding a bike. Two dogs play in the snow.", "en") ==
        "A man is riding a bike. | Two dogs play in the snow.");
  CHECK(split("Ein Mann fährt Fahrrad. Zwei Hunde spielen im Schnee.", "de") ==
        "Ein Mann fährt Fahrrad. | Zwei Hunde spielen im Schnee.");
  CHECK(split("Un homme fait du vélo. Deux chiens jouent dans la neige.", "fr") ==
        "Un homme fait du vélo. | Deux chiens jouent dans la neige.");
  CHECK(split("A girl jumps. A boy runs. An old man sits on a bench.", "en") ==
        "A girl jumps. | A boy runs. | An old man sits on a bench.");
}

TEST_CASE("text/sentence_splitter: a single sentence is one span, a blank line none") {
  CHECK(split("A man in an orange hat starring at something.", "en") ==
        "A man in an orange hat starring at something.");
  CHECK(split("Ein Mann mit einem orangefarbenen Hut, der etwas anstarrt.", "de") ==
        "Ein Mann mit einem orangefarbenen Hut, der etwas anstarrt.");
  CHECK(split("A group of men are loading cotton onto a truck", "en") ==
        "A group of men are loading cotton onto a truck");
  CHECK(split_sentences("", "en").empty());
  CHECK(split_sentences("   \t  ", "de").empty());
  CHECK(split_sentences("\u00A0\u202F \u3000", "fr").empty());
  CHECK(split_sentences("Two dogs play.", "en").size() == 1);
}

TEST_CASE("text/sentence_splitter: ! ? ?! and ellipses end sentences") {
  CHECK(split("Look at the dog! It is jumping over the fence.", "en") ==
        "Look at the dog! | It is jumping over the fence.");
  CHECK(split("Is the man climbing? He is holding a rope.", "en") ==
        "Is the man climbing? | He is holding a rope.");
  CHECK(split("What?! Really? Yes!!", "en") == "What?! | Really? | Yes!!");
  CHECK(split("Schau mal! Der Hund springt. Wirklich?! Ja.", "de") ==
        "Schau mal! | Der Hund springt. | Wirklich?! | Ja.");
  CHECK(split("Regarde ! Le chien saute. Vraiment ?! Oui.", "fr") ==
        "Regarde ! | Le chien saute. | Vraiment ?! | Oui.");
  CHECK(split("The boy waits... Then he jumps into the lake.", "en") ==
        "The boy waits... | Then he jumps into the lake.");
  CHECK(split("Der Junge wartet… Dann springt er in den See.", "de") ==
        "Der Junge wartet… | Dann springt er in den See.");
  CHECK(split("Le garçon attend… Puis il saute dans le lac.", "fr") ==
        "Le garçon attend… | Puis il saute dans le lac.");
}

TEST_CASE("text/sentence_splitter: no split before a lowercase word") {
  CHECK(split("The boy waits... and then he jumps.", "en") ==
        "The boy waits... and then he jumps.");
  CHECK(split("Der Junge wartet … und springt dann.", "de") ==
        "Der Junge wartet … und springt dann.");
  CHECK(split("Le garçon attend… puis saute.", "fr") == "Le garçon attend… puis saute.");
  CHECK(split("\"Stop!\" shouts the man at the dog.", "en") ==
        "\"Stop!\" shouts the man at the dog.");
  CHECK(split("Apples, pears, etc. are on the table.", "en") ==
        "Apples, pears, etc. are on the table.");
}

TEST_CASE("text/sentence_splitter: closing quotes and brackets stay with their sentence") {
  CHECK(split("The sign says \"Stop.\" Two men walk past it.", "en") ==
        "The sign says \"Stop.\" | Two men walk past it.");
  CHECK(split("A man smiles (he has won.) The crowd cheers.", "en") ==
        "A man smiles (he has won.) | The crowd cheers.");
  CHECK(split("The boy shouts 'Go!' A dog runs.", "en") == "The boy shouts 'Go!' | A dog runs.");
  CHECK(split("Er ruft: „Halt!“ Dann bleibt der Hund stehen.", "de") ==
        "Er ruft: „Halt!“ | Dann bleibt der Hund stehen.");
  CHECK(split("Er ruft: »Halt!« Dann bleibt der Hund stehen.", "de") ==
        "Er ruft: »Halt!« | Dann bleibt der Hund stehen.");
  CHECK(split("Il crie : «Stop!» Le chien s'arrête.", "fr") ==
        "Il crie : «Stop!» | Le chien s'arrête.");
  CHECK(split("She said “Hello.” He waved.", "en") == "She said “Hello.” | He waved.");
}

TEST_CASE("text/sentence_splitter: opening quotes, brackets, ¿ ¡ and digits start sentences") {
  CHECK(split("A man waves. \"Hello!\" he shouts.", "en") ==
        "A man waves. | \"Hello!\" he shouts.");
  CHECK(split("Ein Mann winkt. „Hallo!“, ruft er.", "de") ==
        "Ein Mann winkt. | „Hallo!“, ruft er.");
  CHECK(split("Un homme salue. « Bonjour ! » crie-t-il.", "fr") ==
        "Un homme salue. | « Bonjour ! » crie-t-il.");
  CHECK(split("Two dogs play. (The third one sleeps.)", "en") ==
        "Two dogs play. | (The third one sleeps.)");
  CHECK(split("Un hombre canta. ¿Dónde está? ¡Aquí!", "es") ==
        "Un hombre canta. | ¿Dónde está? | ¡Aquí!");
  CHECK(split("A man runs. 3 dogs follow him.", "en") == "A man runs. | 3 dogs follow him.");
  CHECK(split("Ein Mann rennt. 3 Hunde folgen ihm.", "de") ==
        "Ein Mann rennt. | 3 Hunde folgen ihm.");
}

TEST_CASE("text/sentence_splitter: uppercase letters beyond ASCII start sentences") {
  CHECK(split("Ein Mann läuft. Über ihm fliegt ein Vogel.", "de") ==
        "Ein Mann läuft. | Über ihm fliegt ein Vogel.");
  CHECK(split("Ein Kind lacht. Ältere Leute sehen zu. Öffentliche Plätze sind voll.", "de") ==
        "Ein Kind lacht. | Ältere Leute sehen zu. | Öffentliche Plätze sind voll.");
  CHECK(split("Il pleut. À midi, le soleil revient.", "fr") ==
        "Il pleut. | À midi, le soleil revient.");
  CHECK(split("Elle chante. Éric danse. Ça continue. Œdipe regarde. Ève rit.", "fr") ==
        "Elle chante. | Éric danse. | Ça continue. | Œdipe regarde. | Ève rit.");
  CHECK(split("Un chien dort. Ÿvonne le caresse.", "fr") == "Un chien dort. | Ÿvonne le caresse.");
  // Latin Extended-A: pairs on even code points (Ā/ā, Š/š) and on odd ones (Ł/ł, Ž/ž).
  CHECK(split("A man runs. Łukasz follows. Žofia waits. Šimon sings.", "en") ==
        "A man runs. | Łukasz follows. | Žofia waits. | Šimon sings.");
  CHECK(split("A man runs. łukasz follows.", "en") == "A man runs. łukasz follows.");
  CHECK(split("A man runs. ž is a letter.", "en") == "A man runs. ž is a letter.");
  CHECK(split("A man runs. é is a letter.", "en") == "A man runs. é is a letter.");
  // × (U+00D7) sits among the capitals but is not one.
  CHECK(split("It is 3. × 4 is twelve.", "en") == "It is 3. × 4 is twelve.");
  CHECK(split("Мужчина бежит. Собака спит.", "ru") == "Мужчина бежит. | Собака спит.");
}

TEST_CASE("text/sentence_splitter: French spacing before ! ? and inside « »") {
  CHECK(split("Vraiment ? Oui.", "fr") == "Vraiment ? | Oui.");
  CHECK(split("Quelle belle journée ! Les enfants jouent dehors.", "fr") ==
        "Quelle belle journée ! | Les enfants jouent dehors.");
  CHECK(split("« Bonjour ! » dit-il.", "fr") == "« Bonjour ! » dit-il.");
  CHECK(split("« Bonjour ! » Il part.", "fr") == "« Bonjour ! » | Il part.");
  CHECK(split("Il a crié : « Au secours ! » Personne n'est venu.", "fr") ==
        "Il a crié : « Au secours ! » | Personne n'est venu.");
  CHECK(split("Il part. « Attends ! » Elle reste.", "fr") ==
        "Il part. | « Attends ! » | Elle reste.");
  // ; and : are not sentence ends.
  CHECK(split("Il pleut ; Les enfants restent dedans : Ils jouent.", "fr") ==
        "Il pleut ; Les enfants restent dedans : Ils jouent.");
  // With the no-break spaces of French typography.
  CHECK(split("Vraiment\u202F? Oui.", "fr") == "Vraiment\u202F? | Oui.");
  CHECK(split("«\u00A0Bonjour\u00A0!\u00A0» dit-il.", "fr") ==
        "«\u00A0Bonjour\u00A0!\u00A0» dit-il.");
  CHECK(split("«\u00A0Bonjour\u00A0!\u00A0» Il part.", "fr") ==
        "«\u00A0Bonjour\u00A0!\u00A0» | Il part.");
  // A gap of only no-break spaces does not split.
  CHECK(split("Il part.\u00A0Elle reste.", "fr") == "Il part.\u00A0Elle reste.");
}

TEST_CASE("text/sentence_splitter: nothing splits inside quotes or brackets") {
  CHECK(split("He said \"Stop. Go away.\" Then he left.", "en") ==
        "He said \"Stop. Go away.\" | Then he left.");
  CHECK(split("A man holds a microphone with a \"Pop! Tech\" sign in the background.", "en") ==
        "A man holds a microphone with a \"Pop! Tech\" sign in the background.");
  CHECK(split("Zwei Männer stehen vor einem Café mit „Open“-Schild. Ein Hund schläft.", "de") ==
        "Zwei Männer stehen vor einem Café mit „Open“-Schild. | Ein Hund schläft.");
  CHECK(split("Er sagt: „Komm her. Sofort!“ Der Hund kommt.", "de") ==
        "Er sagt: „Komm her. Sofort!“ | Der Hund kommt.");
  CHECK(split("Il dit : « Viens ! Vite ! » Le chien arrive.", "fr") ==
        "Il dit : « Viens ! Vite ! » | Le chien arrive.");
  CHECK(split("Two women (one older. One younger) pose. A man dances.", "en") ==
        "Two women (one older. One younger) pose. | A man dances.");
  CHECK(split("Un homme en t-shirt \"roger smith\", courant. Trois jockeys passent.", "fr") ==
        "Un homme en t-shirt \"roger smith\", courant. | Trois jockeys passent.");
  // Apostrophes are not quotes: they must not hold splits back.
  CHECK(split("The dogs' owner waves. 'Twas a nice day. Rock 'n' roll plays.", "en") ==
        "The dogs' owner waves. | 'Twas a nice day. | Rock 'n' roll plays.");
  // An unclosed quote stops splitting for the rest of the line.
  CHECK(split("A sign says \"Welcome. Come in. Two dogs play.", "en") ==
        "A sign says \"Welcome. Come in. Two dogs play.");
}

TEST_CASE("text/sentence_splitter: CJK 。！？ end sentences without whitespace") {
  CHECK(split("我很好。你呢？", "zh") == "我很好。 | 你呢？");
  CHECK(split("他说：「好。」然后走了。", "zh") == "他说：「好。」 | 然后走了。");
  CHECK(split("犬が走る！猫は寝る。", "ja") == "犬が走る！ | 猫は寝る。");
  CHECK(split("我很好。 you are lowercase", "zh") == "我很好。 | you are lowercase");
  CHECK(split("我很好。", "zh") == "我很好。");
  // Not inside quotes, as everywhere else.
  CHECK(split("他说：「你好。我很好。」然后走了。", "zh") ==
        "他说：「你好。我很好。」 | 然后走了。");
}

// --- Where a dot does not end a sentence --------------------------------------

TEST_CASE("text/sentence_splitter: English abbreviations") {
  CHECK(split("Mr. Smith is riding a bike.", "en") == "Mr. Smith is riding a bike.");
  CHECK(split("Dr. Brown and Prof. Green meet Mrs. Jones and Ms. Lee at St. Paul's.", "en") ==
        "Dr. Brown and Prof. Green meet Mrs. Jones and Ms. Lee at St. Paul's.");
  CHECK(split("Martin Luther King Jr. Day is a holiday. Banks close.", "en") ==
        "Martin Luther King Jr. Day is a holiday. | Banks close.");
  CHECK(split("Apple Inc. CEO Tim Cook speaks on stage.", "en") ==
        "Apple Inc. CEO Tim Cook speaks on stage.");
  CHECK(split("Acme Ltd. Employees wave. Smith & Co. Staff cheer.", "en") ==
        "Acme Ltd. Employees wave. | Smith & Co. Staff cheer.");
  CHECK(split("Cats vs. Dogs is the title. Cf. Chapter two.", "en") ==
        "Cats vs. Dogs is the title. | Cf. Chapter two.");
  CHECK(split("A climber on Mt. Everest waves.", "en") == "A climber on Mt. Everest waves.");
  CHECK(split("Fruit, e.g. Apples, is on sale, i.e. Cheap.", "en") ==
        "Fruit, e.g. Apples, is on sale, i.e. Cheap.");
  CHECK(split("The store opens at 9 a.m. Monday to Friday.", "en") ==
        "The store opens at 9 a.m. Monday to Friday.");
  CHECK(split("The U.S. Army band plays. A crowd watches.", "en") ==
        "The U.S. Army band plays. | A crowd watches.");
  CHECK(split("Smith et al. Found the dogs.", "en") == "Smith et al. Found the dogs.");
}

TEST_CASE("text/sentence_splitter: abbreviations before numbers, and the same words as words") {
  CHECK(split("No. 5 is the red car.", "en") == "No. 5 is the red car.");
  CHECK(split("The runner wears No. 12 on his shirt.", "en") ==
        "The runner wears No. 12 on his shirt.");
  CHECK(split("No. We stay here.", "en") == "No. | We stay here.");
  CHECK(split("See Fig. 3 for the dog.", "en") == "See Fig. 3 for the dog.");
  CHECK(split("The parade was on Jan. 5 in Boston.", "en") ==
        "The parade was on Jan. 5 in Boston.");
  CHECK(split("Er trägt Nr. 7 auf dem Trikot.", "de") == "Er trägt Nr. 7 auf dem Trikot.");
  CHECK(split("Siehe Abb. 2 und Kap. 4.", "de") == "Siehe Abb. 2 und Kap. 4.");
  CHECK(split("Ich traf Jan. Er war müde.", "de") == "Ich traf Jan. | Er war müde.");
  CHECK(split("Voir fig. 3 et chap. 2. Le chien dort.", "fr") ==
        "Voir fig. 3 et chap. 2. | Le chien dort.");
}

TEST_CASE("text/sentence_splitter: etc. and usw. end a sentence before a sentence start") {
  // Decision (edgemt/sentences.h): they close an enumeration, which nearly
  // always closes its sentence.
  CHECK(split("We bought apples, pears, etc. Then we went home.", "en") ==
        "We bought apples, pears, etc. | Then we went home.");
  CHECK(split("Sie kaufen Äpfel, Birnen usw. Danach gehen sie nach Hause.", "de") ==
        "Sie kaufen Äpfel, Birnen usw. | Danach gehen sie nach Hause.");
  CHECK(split("Sie kaufen Äpfel, Birnen etc. Danach gehen sie.", "de") ==
        "Sie kaufen Äpfel, Birnen etc. | Danach gehen sie.");
  CHECK(split("Ils achètent des pommes, des poires, etc. Ensuite ils rentrent.", "fr") ==
        "Ils achètent des pommes, des poires, etc. | Ensuite ils rentrent.");
  CHECK(split("Ils achètent des pommes, des poires, etc. et rentrent.", "fr") ==
        "Ils achètent des pommes, des poires, etc. et rentrent.");
}

TEST_CASE("text/sentence_splitter: German abbreviations") {
  CHECK(split("Er kauft z.B. Äpfel und Birnen.", "de") == "Er kauft z.B. Äpfel und Birnen.");
  CHECK(split("Er kauft z. B. Äpfel und Birnen.", "de") == "Er kauft z. B. Äpfel und Birnen.");
  CHECK(split("Der Hund ist müde, d.h. Er schläft.", "de") ==
        "Der Hund ist müde, d.h. Er schläft.");
  CHECK(split("Sie besuchten u.a. Berlin und Hamburg.", "de") ==
        "Sie besuchten u.a. Berlin und Hamburg.");
  CHECK(split("Hr. Müller und Fr. Schmidt gehen mit Dr. Weber und Prof. Klein spazieren.", "de") ==
        "Hr. Müller und Fr. Schmidt gehen mit Dr. Weber und Prof. Klein spazieren.");
  CHECK(split("Das Zelt kostet ca. 50 Euro bzw. Etwas mehr.", "de") ==
        "Das Zelt kostet ca. 50 Euro bzw. Etwas mehr.");
  CHECK(split("Er trägt evtl. Einen Hut, ggf. Eine Mütze, vgl. Foto.", "de") ==
        "Er trägt evtl. Einen Hut, ggf. Eine Mütze, vgl. Foto.");
  CHECK(split("Der Preis ist inkl. Mehrwertsteuer, bspw. Für Schuhe.", "de") ==
        "Der Preis ist inkl. Mehrwertsteuer, bspw. Für Schuhe.");
  CHECK(split("Siehe S. 12 im Buch.", "de") == "Siehe S. 12 im Buch.");
  CHECK(split("Sie wohnt in der Hauptstr. 5 in Berlin.", "de") ==
        "Sie wohnt in der Hauptstr. 5 in Berlin.");
  CHECK(split("Das Café in der Bahnhofstr. Nord ist voll.", "de") ==
        "Das Café in der Bahnhofstr. Nord ist voll.");
  CHECK(split("Ein Junge mit der Brille von Mr. Potato Head.", "de") ==
        "Ein Junge mit der Brille von Mr. Potato Head.");
}

TEST_CASE("text/sentence_splitter: French abbreviations") {
  CHECK(split("M. Dupont et Mme. Martin promènent le chien.", "fr") ==
        "M. Dupont et Mme. Martin promènent le chien.");
  CHECK(split("MM. Durand et Petit discutent avec Mlle. Roux.", "fr") ==
        "MM. Durand et Petit discutent avec Mlle. Roux.");
  CHECK(split("Le Dr. Martin soigne un chien.", "fr") == "Le Dr. Martin soigne un chien.");
  CHECK(split("Des fruits, p. ex. Des pommes, sont sur la table.", "fr") ==
        "Des fruits, p. ex. Des pommes, sont sur la table.");
  CHECK(split("Il est malade, c.-à-d. Il reste au lit.", "fr") ==
        "Il est malade, c.-à-d. Il reste au lit.");
  CHECK(split("En 52 av. J.-C. César gagne. Les Gaulois partent.", "fr") ==
        "En 52 av. J.-C. César gagne. | Les Gaulois partent.");
  CHECK(split("Le village compte env. 300 habitants.", "fr") ==
        "Le village compte env. 300 habitants.");
}

TEST_CASE("text/sentence_splitter: lists follow the language") {
  // Hrn. is German only, Mme. French only; "" and other codes use all lists.
  CHECK(split("Sie spricht mit Hrn. Weber.", "de") == "Sie spricht mit Hrn. Weber.");
  CHECK(split("Sie spricht mit Hrn. Weber.", "") == "Sie spricht mit Hrn. Weber.");
  CHECK(split("Sie spricht mit Hrn. Weber.", "nl") == "Sie spricht mit Hrn. Weber.");
  CHECK(split("She talks to Hrn. Weber.", "en") == "She talks to Hrn. | Weber.");
  CHECK(split("Elle parle à Mme. Roux.", "fr") == "Elle parle à Mme. Roux.");
  CHECK(split("Elle parle à Mme. Roux.", "") == "Elle parle à Mme. Roux.");
}

TEST_CASE("text/sentence_splitter: initials") {
  CHECK(split("J. R. R. Tolkien wrote books. Two dogs play.", "en") ==
        "J. R. R. Tolkien wrote books. | Two dogs play.");
  CHECK(split("J.R.R. Tolkien wrote books.", "en") == "J.R.R. Tolkien wrote books.");
  CHECK(split("George W. Bush gives a speech.", "en") == "George W. Bush gives a speech.");
  CHECK(split("Ein Bild von Johann S. Bach hängt an der Wand.", "de") ==
        "Ein Bild von Johann S. Bach hängt an der Wand.");
  CHECK(split("Un portrait de Charles A. Dupont est accroché au mur.", "fr") ==
        "Un portrait de Charles A. Dupont est accroché au mur.");
  CHECK(split("Ein Porträt von Ö. Yılmaz hängt dort.", "de") ==
        "Ein Porträt von Ö. Yılmaz hängt dort.");
}

TEST_CASE("text/sentence_splitter: numbers") {
  // Dots and commas inside numbers are never a place to split.
  CHECK(split("The dog weighs 3.5 kg. It is small.", "en") ==
        "The dog weighs 3.5 kg. | It is small.");
  CHECK(split("The bike costs 1,000.50 dollars. Nobody buys it.", "en") ==
        "The bike costs 1,000.50 dollars. | Nobody buys it.");
  CHECK(split("Version 2.0.1 is out. It is faster.", "en") ==
        "Version 2.0.1 is out. | It is faster.");
  CHECK(split("Am 24.11.2026 um 10.30 Uhr beginnt das Rennen. Alle warten.", "de") ==
        "Am 24.11.2026 um 10.30 Uhr beginnt das Rennen. | Alle warten.");
  CHECK(split("Le 24.11.2026 à 10.30, la course commence. Tout le monde attend.", "fr") ==
        "Le 24.11.2026 à 10.30, la course commence. | Tout le monde attend.");
  // A number at the end of an English or French sentence ends it.
  CHECK(split("He counted to 10. Then he stopped.", "en") ==
        "He counted to 10. | Then he stopped.");
  CHECK(split("Le joueur porte le numéro 10. Il court.", "fr") ==
        "Le joueur porte le numéro 10. | Il court.");
}

TEST_CASE("text/sentence_splitter: German ordinals and dates") {
  CHECK(split("Am 3. Mai belegte er den 2. Platz.", "de") == "Am 3. Mai belegte er den 2. Platz.");
  CHECK(split("Er feiert seinen 100. Geburtstag im 19. Jahrhundert.", "de") ==
        "Er feiert seinen 100. Geburtstag im 19. Jahrhundert.");
  CHECK(split("Er kommt am 24.11. Abends an.", "de") == "Er kommt am 24.11. Abends an.");
  CHECK(split("Der 3. Läufer ist müde.", "de") == "Der 3. Läufer ist müde.");
  // An article or pronoun cannot follow an ordinal: the number ended the sentence.
  CHECK(split("Ein Spieler trägt das Trikot mit der Nummer 28. Ein Mann sieht zu.", "de") ==
        "Ein Spieler trägt das Trikot mit der Nummer 28. | Ein Mann sieht zu.");
  CHECK(split("Ein Läufer mit der Zahl 281. Eine Gruppe beobachtet ihn.", "de") ==
        "Ein Läufer mit der Zahl 281. | Eine Gruppe beobachtet ihn.");
  CHECK(split("Er kam als 3. Über ihm stand der Sieger.", "de") ==
        "Er kam als 3. | Über ihm stand der Sieger.");
  // Four digits are a year, not an ordinal.
  CHECK(split("Das war im Jahr 2010. Danach zog er um.", "de") ==
        "Das war im Jahr 2010. | Danach zog er um.");
  // Conservative: a small number before a noun stays together.
  CHECK(split("Er zählte bis 10. Hunde bellten.", "de") == "Er zählte bis 10. Hunde bellten.");
  // Unknown languages take the German rule; English does not.
  CHECK(split("Am 3. Mai regnet es.", "") == "Am 3. Mai regnet es.");
  CHECK(split("He finished 3. Nobody cared.", "en") == "He finished 3. | Nobody cared.");
}

TEST_CASE("text/sentence_splitter: list numbers at the start of a sentence") {
  CHECK(split("1. Introduction", "en") == "1. Introduction");
  CHECK(split("1. Einleitung", "de") == "1. Einleitung");
  CHECK(split("2. Méthodes", "fr") == "2. Méthodes");
  CHECK(split("II. Methods", "en") == "II. Methods");
  CHECK(split("  3. Results and discussion", "en") == "3. Results and discussion");
  CHECK(split("Do this. 1. Open the box. 2. Take the camera.", "en") ==
        "Do this. | 1. Open the box. | 2. Take the camera.");
}

TEST_CASE("text/sentence_splitter: ellipses in brackets are omissions") {
  CHECK(split("The man said [...] That was all.", "en") == "The man said [...] That was all.");
  CHECK(split("Der Mann sagte (…) Das war alles.", "de") == "Der Mann sagte (…) Das war alles.");
}

TEST_CASE("text/sentence_splitter: URLs, e-mail addresses and dotted words") {
  CHECK(split("Visit www.example.com for details.", "en") == "Visit www.example.com for details.");
  CHECK(split("Visit www.example.com. Then call us.", "en") ==
        "Visit www.example.com. | Then call us.");
  CHECK(split("See https://example.com/a.b?c=d.e for more.", "en") ==
        "See https://example.com/a.b?c=d.e for more.");
  CHECK(split("Schreiben Sie an info@example.de. Wir antworten.", "de") ==
        "Schreiben Sie an info@example.de. | Wir antworten.");
  CHECK(split("Écrivez à contact@exemple.fr. Nous répondons.", "fr") ==
        "Écrivez à contact@exemple.fr. | Nous répondons.");
  CHECK(split("I use Node.js daily. It is fast.", "en") == "I use Node.js daily. | It is fast.");
}

TEST_CASE("text/sentence_splitter: the line's leading and trailing whitespace is not in a span") {
  const std::string_view line = "  \tA man runs.   Two dogs play.\t \u00A0";
  const std::vector<SentenceSpan> spans = split_sentences(line, "en");
  CHECK(split(line, "en") == "A man runs. | Two dogs play.");
  CHECK((!spans.empty() && spans.front().begin == 3));
  CHECK(well_formed(line, spans));
  CHECK(split(" One sentence only. ", "en") == "One sentence only.");
}

// --- Joining --------------------------------------------------------------------

TEST_CASE("text/sentence_splitter: join_sentences keeps the whitespace between spans") {
  const std::string_view line = "A. \tB.";
  const std::vector<SentenceSpan> spans = {{0, 2}, {4, 6}};
  CHECK(join_sentences(line, spans, {"X", "Y"}) == "X \tY");

  const std::string_view captions = "  A man runs.  Two dogs play. \t";
  const std::vector<SentenceSpan> split_spans = split_sentences(captions, "en");
  CHECK(split_spans.size() == 2);
  CHECK(join_sentences(captions, split_spans, {"Ein Mann rennt.", "Zwei Hunde spielen."}) ==
        "Ein Mann rennt.  Zwei Hunde spielen.");
  // CJK sentences have nothing between them, and get nothing.
  const std::string_view chinese = "我很好。你呢？";
  CHECK(join_sentences(chinese, split_sentences(chinese, "zh"), {"I am fine.", "And you?"}) ==
        "I am fine.And you?");
}

TEST_CASE("text/sentence_splitter: join_sentences of one, none, and mismatched counts") {
  const std::string_view line = "A man runs. Two dogs play.";
  const std::vector<SentenceSpan> spans = split_sentences(line, "en");
  CHECK(spans.size() == 2);
  CHECK(join_sentences("Hello.", split_sentences("Hello.", "en"), {"Hallo."}) == "Hallo.");
  CHECK(join_sentences("   ", {}, {}).empty());
  CHECK(join_sentences(line, spans, {"X"}) == "X");                // fewer: ends after them
  CHECK(join_sentences(line, spans, {"X", "Y", "Z"}) == "X Y Z");  // more: one space each
  CHECK(join_sentences(line, {}, {"X", "Y"}) == "X Y");
  // Spans that are not split_sentences' (overlapping, out of the line): one space.
  CHECK(join_sentences(line, {{5, 9}, {2, 4}}, {"X", "Y"}) == "X Y");
  CHECK(join_sentences(line, {{0, 3}, {500, 600}}, {"X", "Y"}) == "X Y");
}

TEST_CASE("text/sentence_splitter: split then join with the sentences themselves gives the line") {
  for (const char* line : {"A man runs. Two dogs play.", "  Vraiment ? Oui !  ",
                           "Er ruft: „Halt!“\t\tDann bleibt er stehen.", "我很好。你呢？"}) {
    const std::vector<SentenceSpan> spans = split_sentences(line, "");
    CHECK(join_sentences(line, spans, texts(line, spans)) == trimmed(line, spans));
  }
}

// --- Robustness ---------------------------------------------------------------

TEST_CASE("text/sentence_splitter: malformed UTF-8 is split around, never into") {
  // A lone continuation byte, an overlong sequence, a truncated sequence at
  // the end, and 0xFF: ordinary non-letters.
  CHECK(split("A man runs. \x80 Two dogs play.", "en") == "A man runs. \x80 Two dogs play.");
  CHECK(split("A man runs. \xC0\x81 Two dogs.", "de") == "A man runs. \xC0\x81 Two dogs.");
  CHECK(split("A man runs. Two dogs \xC3", "fr") == "A man runs. | Two dogs \xC3");
  CHECK(split("\xFF\xFE. \xFF. Two dogs.", "") == "\xFF\xFE. \xFF. | Two dogs.");
  CHECK(split("A man runs.\xC2 Two", "en") == "A man runs.\xC2 Two");
  // Truncated multibyte marks: neither a quote nor a space.
  CHECK(split("He says \xE2\x80 Stop. Go.", "en") == "He says \xE2\x80 Stop. | Go.");
  CHECK(split("Stop.\xE2\x80 Go.", "en") == "Stop.\xE2\x80 Go.");
  for (const char* line : {"\x80", "\xC3", "\xE2\x80", "\xE3\x80", ".\xC3 \xC3.", "\xC3\x28. A"}) {
    CHECK(well_formed(line, split_sentences(line, "")));
  }
  // An embedded NUL byte is a character like any other.
  const std::string with_nul("A man runs.\0 Two dogs. Three cats.", 34);
  CHECK(split(with_nul, "en") == std::string("A man runs.\0 Two dogs. | Three cats.", 36));
}

TEST_CASE("text/sentence_splitter: punctuation only") {
  CHECK(split(".", "en") == ".");
  CHECK(split("...", "en") == "...");
  CHECK(split("?!?! !!! ... .", "en") == "?!?! !!! ... .");
  CHECK(split(". . .", "de") == ". . .");
  CHECK(split("« » \" ' ( ) [ ]", "fr") == "« » \" ' ( ) [ ]");
  CHECK(split("! A", "en") == "! | A");
  CHECK(split("。。。", "zh") == "。。。");
  CHECK(split("。A", "zh") == "。 | A");
  for (const char* line : {".", "!?", " . ", "\"", "«", "» «", ")(", "。」", "「。", "… …"}) {
    CHECK(well_formed(line, split_sentences(line, "")));
  }
}

// Random lines from pieces that exercise every rule, in every language: the
// result is always well formed and joins back to the line.
TEST_CASE("text/sentence_splitter: random lines are always split into well-formed spans") {
  const std::vector<std::string_view> pieces = {
      "A",      "a",      "Mr",   "z",    "3",    "2010",     "etc", "No", "Ein", "É",  "ł",
      ".",      "!",      "?",    "…",    "...",  "。",       "\"",  "'",  "«",   "»",  "„",
      "“",      "(",      ")",    "[",    "]",    "¿",        " ",   " ",  "  ",  "\t", "\u00A0",
      "\u202F", "\u3000", "\x80", "\xC3", "\xFF", "\xE2\x80", "-",   "@",  "www", ",",  ":"};
  uint64_t state = 0x9E3779B97F4A7C15ULL;  // xorshift64: the same lines on every run
  const auto next = [&state]() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (int round = 0; round < 3000; ++round) {
    std::string line;
    const size_t length = next() % 40;
    for (size_t k = 0; k < length; ++k) line += pieces[next() % pieces.size()];
    for (std::string_view language : {"en", "de", "fr", ""}) {
      const std::vector<SentenceSpan> spans = split_sentences(line, language);
      INFO("line: \"" << line << "\" language: " << std::string(language));
      CHECK(well_formed(line, spans));
      CHECK(join_sentences(line, spans, texts(line, spans)) == trimmed(line, spans));
    }
  }
}

TEST_CASE("text/sentence_splitter: 100 KB lines") {
  std::string captions;
  while (captions.size() < 100 * 1024) captions += "A man is riding a bike. Two dogs play. ";
  const std::vector<SentenceSpan> spans = split_sentences(captions, "en");
  CHECK(spans.size() == 2 * (captions.size() / 39));
  CHECK(well_formed(captions, spans));

  std::string initials;  // one sentence of 100 KB: nothing may split it
  while (initials.size() < 100 * 1024) initials += "A. B. ";
  CHECK(split_sentences(initials, "en").size() == 1);

  const std::string word(100 * 1024, 'x');
  const std::vector<SentenceSpan> one = split_sentences(word, "de");
  CHECK(one.size() == 1);
  CHECK((!one.empty() && one.front().begin == 0 && one.front().end == word.size()));
}

// Seconds split_sentences takes on `piece` repeated to `bytes` bytes, the
// best of three runs (runs that the machine's load slowed down are dropped).
double best_seconds(std::string_view piece, size_t bytes) {
  std::string line;
  while (line.size() < bytes) line += piece;
  double best = 1e9;
  for (int run = 0; run < 3; ++run) {
    const auto start = std::chrono::steady_clock::now();
    const size_t spans = split_sentences(line, "").size();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(spans >= 1);
    best = std::min(best, seconds);
  }
  return best;
}

// The shapes that would make a careless splitter quadratic: a scan back to
// the sentence's start at every dot, a look-ahead over every open quote or
// lone « at every gap, a rescan of a long token. Sixteen times the bytes
// must take about sixteen times as long (256 times if quadratic; the bound,
// 64, leaves a factor of 4 both ways for caches and a loaded machine). A
// ratio, not a time, so that the check means the same in Release and under
// sanitizers (CI runs the suite under ASan and TSan).
TEST_CASE("text/sentence_splitter: time is linear in the line's length") {
  constexpr size_t kSmall = 16 * 1024;
  constexpr size_t kLarge = 16 * kSmall;
  for (std::string_view piece : {"A. ", "Dogs run. ", "\"Hi. ", "« ", "» ", "。", "."}) {
    const double small = best_seconds(piece, kSmall);
    const double large = best_seconds(piece, kLarge);
    const double ratio = large / std::max(small, 1e-6);
    MESSAGE("\"" << std::string(piece) << "\" " << kSmall / 1024 << " KB: " << small * 1e3
                 << " ms, " << kLarge / 1024 << " KB: " << large * 1e3 << " ms, ratio " << ratio);
    CHECK(ratio < 64.0);
  }
}

}  // namespace
}  // namespace edgemt
