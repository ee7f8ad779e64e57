"""Requests that no tool of ours does: food, a taxi, a message, a call, music, shopping, a booking.

``cannot_do(norm)`` is the short true answer for such a request ("I can't order food; I can control
your devices, tell the time, set timers and answer questions."), said locally instead of leaving it to
a model that answers "Sure, I can order you a pizza". Only a request to *do* the thing counts: the
words begin with the doing ("order me a pizza", "call mum", "play some jazz"), or with a wish or an
ask before it ("I need a taxi", "I'd like to send a message", "are you able to book a table"). A
question about the thing ("who sings this song", "what is uber", "how much is a taxi to the airport",
"what do you call a baby goat") is not, nor is a negation ("don't call him"). The classifier asks
only for requests routed ``general`` or ``web`` that name no device of the home ("play the radio"
where the home has a Radio is a device request). Anything unsure is None: the model answers.

Pure: patterns over the classifier's normalised text (lower case, fillers such as "can you" and
"please" gone).
"""

from __future__ import annotations

import re

#: What the assistant can do, said after what it cannot.
CAN_DO = "I can control your devices, tell the time, set timers and answer questions."

#: A wish or an ask that may come before the doing ("I need", "I'd like to", "are you able to").
_LEAD = (
    r"^(?:(?:ok|okay|so|just|now|quickly|hey)\s)*"
    r"(?:(?:i (?:want|need|would like|would love|wanna)|i'd (?:like|love)|i'll have|let's|let me|help me|"
    r"go ahead and|are you able to|is it possible to|can i|could i|i want to|i need to|i'd like to)"
    r"(?: you)?(?: to)? )?"
)
#: A wish with no verb names only the thing: "I need a taxi", "I'd like a pizza".
_WISH = r"^(?:i (?:want|need|would like|would love)|i'd (?:like|love)|i'll have|get me|gimme) "
_SOME = r"(?:me |us |him |her |them )?(?:(?:a|an|the|some|my|our|more|another|two|three|four|a couple of) )?"

_FOOD = (
    r"pizzas?|takeaway|takeout|take out|food|delivery|sushi|burgers?|curry|kebabs?|noodles|fries|"
    r"chinese|indian|thai|mexican|dinner|lunch|breakfast|a meal|meals?"
)
#: Food that comes from elsewhere: wished for or got, it is ordered.
_TAKEAWAY = r"pizzas?|takeaway|takeout|take out|sushi|burgers?|kebabs?|curry|chinese|indian|thai|food"
#: Words after a food that make it something to read or know, not to order.
_NOT_FOOD = r"(?! (?:recipes?|ideas?|calories|places?|near|dough|oven|stone|shop|shops)\b)"
_RIDE = r"taxis?|cabs?|ubers?|lyfts?|rides?|minicab|car service"
#: Someone to call or write to: a person's word or a name, never a word of something else.
_NOT_A_PERSON = (
    r"(?:it|me|myself|the|a|an|this|that|these|those|to|size|box|file|message|messages|text|email|emails|"
    r"light|lights|lamp|heating|timer|alarm|off|on|up|down|back|out|in|for|time|speech|editor|field|"
    r"notifications?|settings?|address|addresses)\b"
)
#: Someone to call or write to: a name, a person's word ("my sister"), or a trade or an office.
_SOMEONE = (
    rf"(?:(?!{_NOT_A_PERSON})(?:my |our )?\w+|(?:the |my |our |an? )(?:doctor|dentist|plumber|electrician|"
    r"office|police|ambulance|vet|school|bank|landlord|landlady|builder|boss|teacher|neighbou?rs?)\b)"
)
_MUSIC = (
    r"music|songs?|tracks?|album|albums|playlists?|podcasts?|radio|audiobooks?|tunes|jazz|rock|pop|"
    r"hip hop|rap|classical|metal|country|reggae|blues|spotify|a record"
)
_GAMES = r"games?|chess|cards|quiz|trivia|i spy|hide and seek|catch|fetch|tag|dead|rock paper scissors"
_BOOKABLE = (
    r"table|reservation|flights?|hotel|hotel room|room for|tickets?|seats?|holiday|trip|train|restaurant|"
    r"cinema|spa|massage|haircut"
)

#: (pattern after ``_LEAD``, what cannot be done): the first that matches answers.
_CANNOT: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), what)
    for pattern, what in (
        (
            # "call me an uber", "get us a taxi", "book a cab to the station", "I need a ride".
            rf"{_LEAD}(?:call|get|order|book|hail|find|send|grab|arrange)(?: for)? {_SOME}(?:{_RIDE})\b"
            rf"|{_WISH}{_SOME}(?:{_RIDE})\b",
            "book a taxi or a ride",
        ),
        (
            rf"{_LEAD}(?:order|send for)(?: in)? {_SOME}(?:\w+ ){{0,3}}(?:{_FOOD})\b{_NOT_FOOD}"
            rf"|{_LEAD}get (?:me |us )(?:a |an |some )?(?:\w+ )?(?:{_TAKEAWAY})\b{_NOT_FOOD}"
            rf"|{_LEAD}(?:have|get) {_SOME}(?:\w+ )?(?:{_FOOD}) delivered\b"
            rf"|{_WISH}{_SOME}(?:\w+ )?(?:{_TAKEAWAY})\b{_NOT_FOOD}",
            "order food",
        ),
        (
            # "send a message to mum", "send mum a text", "drop her an email", "text my brother".
            # Help to write one is the model's ("help me write an email to Sam").
            rf"^(?!.*\bhelp me (?:write|compose|draft|word)\b){_LEAD}"
            r"(?:send|write|shoot|drop|compose)(?: \w+)? "
            r"(?:a |an )?(?:message|text|email|e mail|sms|whatsapp|dm|voice note|voicemail)\b"
            rf"|{_LEAD}(?:text|message|email|e mail|whatsapp|sms|dm) {_SOMEONE}"
            rf"|{_LEAD}reply to (?:the |that |this |my )?(?:message|text|email)\b"
            rf"|{_LEAD}(?:post|tweet)(?: \w+)* (?:on|to) (?:facebook|twitter|instagram|x|linkedin)\b",
            "send messages",
        ),
        (
            # "call mum", "ring my sister", "phone the plumber", "make a call to dad".
            rf"{_LEAD}(?:call|phone|ring|dial|facetime|video call|skype)(?: up)? {_SOMEONE}"
            rf"|{_LEAD}(?:make|place|start) (?:a |an )?(?:phone |video )?call\b"
            rf"|{_LEAD}give (?:my )?\w+ a (?:call|ring|bell)\b",
            "make phone calls",
        ),
        (
            # "play some jazz", "put on a podcast", "play bohemian rhapsody by queen".
            rf"{_LEAD}(?!.*\b(?:{_GAMES})\b)"
            r"(?:play|put on|stream|shuffle|queue(?: up)?|blast|listen to(?! th(?:is|at)\b))(?: me| us)? "
            rf"(?:(?:a|an|the|some|my|our|that|this) )?(?:\w+ ){{0,3}}(?:{_MUSIC})\b"
            rf"|^(?!.*\b(?:{_GAMES})\b)(?:play|put on) [\w' ]+ by \w+",
            "play music or audio",
        ),
        (
            rf"{_LEAD}(?:book|reserve)(?: me| us)? (?:a |an |the |two |three |four |some )?"
            rf"(?:\w+ )?(?:{_BOOKABLE})\b|{_LEAD}make (?:a |an )?(?:reservation|booking)\b",
            "make bookings or reservations",
        ),
        (
            # "buy more milk", "order a new kettle", "add eggs to my shopping list".
            rf"{_LEAD}(?:buy|purchase|order|reorder|re order|shop for)(?: me| us)? (?!by\b|of\b|in\b)\w+"
            rf"|{_LEAD}(?:add|put) [\w' ]+ (?:to|on|in|into) (?:my |the |our )?(?:shopping|grocery|groceries)"
            r"(?: list| cart| basket)?\b"
            rf"|{_LEAD}(?:add|put) [\w' ]+ (?:to|in|into) (?:my |the |our )?(?:cart|basket|amazon)\b",
            "shop or order things",
        ),
    )
)


#: Said after "I can't make phone calls" when the call is for help.
EMERGENCY = "If this is an emergency, call your local emergency number now."
_EMERGENCY = re.compile(
    r"\b(?:ambulance|police|fire brigade|fire department|emergency|911|999|112|nine one one|nine nine nine|"
    r"one one two)\b"
)


def cannot_do(norm: str) -> str | None:
    """The answer to a request to do something no tool does ("I can't order food; ..."), or None."""
    for pattern, what in _CANNOT:
        if pattern.search(norm):
            if what == "make phone calls" and _EMERGENCY.search(norm):
                return f"I can't {what}. {EMERGENCY}"
            return f"I can't {what}; {CAN_DO}"
    return None
