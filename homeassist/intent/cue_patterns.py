"""The vocabulary of request routing: one regular expression per idea, by the kind it points to.

Each pattern is one idea ("a timer word", "a device noun", "a question about the weather"), written
by hand from the vocabulary and phrasing of its domain, never from sentences of an evaluation set.
``router.CUES`` gives each its name, kind and weight. Patterns match normalised text (lower case,
numbers as digits).
"""

from __future__ import annotations

from homeassist.vocabulary import TYPE_NOUN_PATTERNS


def either(first: str, second: str) -> str:
    """Both ideas, as whole words, in either order."""
    return rf"(?:\b(?:{first})\b.*\b(?:{second})\b|\b(?:{second})\b.*\b(?:{first})\b)"


def any_words(*alternatives: str) -> str:
    """A regex alternation of phrases, each matched as whole words (and an optional plural -s)."""
    return r"\b(?:" + "|".join(alternatives) + r")s?\b"


#: The device types' own nouns (``vocabulary.TYPE_NOUNS``), then the other things a home request names.
_DEVICE_NOUNS = (
    *TYPE_NOUN_PATTERNS,
    r"chandelier",
    r"led strip",
    r"leds",
    r"ceiling fan",
    r"radiators?",
    r"furnace",
    r"boiler",
    r"hvac",
    r"a ?c",
    r"air ?con(?:ditioner|ditioning)?",
    r"garage(?: door)?",
    r"gates?",
    r"doors?",
    r"deadbolt",
    r"windows?",
    r"skylight",
    r"valves?",
    r"sprinklers?",
    r"irrigation",
    r"vacuum(?: cleaner)?",
    r"robot vacuum",
    r"roomba",
    r"roborock",
    r"hoover",
    r"(?:lawn ?)?mower",
    r"tv",
    r"television",
    r"speakers?",
    r"coffee (?:maker|machine)",
    r"kettle",
    r"oven",
    r"stove",
    r"dishwasher",
    r"washer",
    r"washing machine",
    r"dryer",
    r"fridge",
    r"refrigerator",
    r"freezer",
    r"humidifier",
    r"dehumidifier",
    r"purifier",
    r"detectors?",
    r"cameras?",
    r"doorbell",
    r"chime",
    r"siren",
    r"scene",
    r"(?:guest|away|night|eco|vacation|party|sleep|home) mode",
    r"media player",
    r"shower",
    r"charging station",
    r"dock",
    r"scripts?",
    r"routines?",
    r"automations?",
    r"coffee",
    r"brightness",
    r"dimmer",
    r"devices?",
    r"appliances?",
    r"hue",
    r"wemo",
    r"smart plug",
    r"socket",
    r"pump",
    r"water heater",
    r"fireplace",
    r"alarm system",
    r"security system",
)
DEVICE_NOUN = any_words(*_DEVICE_NOUNS)
#: Any one device noun, for patterns that put it beside other words.
_ANY_DEVICE = "|".join(_DEVICE_NOUNS)
DEVICE_VERB = (
    r"\b(?:turn|switch|power|flip|shut)\b.*\b(?:on|off|up|down)\b"
    # "put the heating on", not "put a stop on my account": on/off here ends the phrase or a clause.
    r"|\b(?:put|set|keep|leave)\b.*\b(?:on|off)\b(?! (?:my|the|a|an|your|our|his|her|their|this|that)\b)"
    r"|\b(?:turn|switch|power|flip|shut|shutdown|cut) (?:on|off|down|up)\b"
    r"|\b(?:dim|brighten|lighten|darken|illuminate|unlock|lock|toggle|arm|disarm|"
    r"mow|mowing|vacuum|vacuuming|watering|preheat|brew|transition to)\b"
    r"|^(?:\w+ ){0,3}(?:on|off)$|\breturn (?:to )?(?:the )?(?:base|dock|charger)\b"
    # "crank the heat up", "knock the heating back a touch".
    r"|\b(?:crank|whack|knock|bump|dial|nudge|pump|bring)\b.*\b(?:up|down|back)\b"
)
# Verbs that also open apps and start games: evidence only beside a device noun or a room.
WEAK_DEVICE_VERB = (
    r"\b(?:open|close|raise|lower|activate|deactivate|enable|disable|start|stop|pause|resume|"
    r"unpause|clean|cleaning|water|heat|cool|warm|run)\b"
)
# Rooms of a house: with a setting or an action they point at the devices there.
ROOM = any_words(
    r"kitchen",
    r"bathroom",
    r"bedroom",
    r"living room",
    r"lounge",
    r"dining room",
    r"office",
    r"study",
    r"basement",
    r"cellar",
    r"attic",
    r"garage",
    r"hallway",
    r"hall",
    r"landing",
    r"nursery",
    r"playroom",
    r"porch",
    r"patio",
    r"terrace",
    r"balcony",
    r"garden",
    r"lawn",
    r"yard",
    r"pool",
    r"house",
    r"flat",
    r"apartment",
    r"room",
    r"upstairs",
    r"downstairs",
    r"(?:first|second|ground|top|upper|lower) floor",
)
LONG_QUESTION = r"^(?:what|which|who|where|when|why|how)\b(?:\W+\w+){9,}"
LEVEL_CHANGE = (
    r"\b(?:brighter|dimmer|darker|lighter|warmer|cooler|hotter|colder|louder|quieter)\b"
    r"|\b(?:too|very|so) (?:dark|bright|hot|cold|warm|chilly|stuffy)\b|\bpitch (?:black|dark)\b"
    # How it feels, said as a complaint ("I'm freezing", "it's getting chilly in the hallway"): about the
    # heat or the lights, so the model answering gets the device tools.
    r"|\b(?:i'?m|i am|it'?s|it is|getting|feeling|we'?re)(?: so| really| very| a bit| a little| quite|"
    r" pretty)* (?:cold|freezing|chilly|hot|boiling|roasting|sweltering|stuffy|gloomy|pitch black)\b"
    # "it's freezing in chicago" is the weather's; "in here", "in the hallway" are the home's.
    r"(?! (?:in|at) (?!(?:here|the|my|our|this)\b)\w+)"
    r"|\b(?:increase|decrease|raise|lower|reduce|boost|adjust|change|set|make)\b.*"
    r"\b(?:brightness|light|lights|lighting|temp|temperature|heat|heating|level|colou?r|"
    r"fan|speed|volume)\b"
    r"|\b(?:colou?r temperature|kelvin|[1-9]\d{3} ?k|warm white|cool white)\b"
    r"|\b(?:red|green|blue|yellow|purple|pink|orange|white|violet|cyan|magenta)\b"
    r".*\b(?:light|lights|lighting|lamp|bulb)\b"
    r"|\b(?:change|make|set|turn|switch)\b.*\bcolou?r\b|\bcolou?r (?:of|in|at) .* to\b"
    r"|\b(?:to|make|turn|set|change)\b.*\b(?:red|green|blue|yellow|purple|pink|orange|white|violet|"
    r"cyan|magenta)$"
    r"|\b\d+ ?(?:%|percent)"
    # "it's freezing, warm it up to 22": how warm it feels or the heat, and a number to go to.
    r"|\b(?:cold|freezing|chilly|hot|boiling|stuffy|warm|heat|cool)\b.*\b(?:up|down) to \d{1,2}\b"
    r"(?!\s*(?:%|percent|minutes?|seconds?|hours?|days?|weeks?|months?|years?|times?|people|guests)\b)"
)
_STATE_WORD = (
    r"(?:on|off|open|opened|opening|closed|closing|shut|locked|unlocked|running|triggered|detected|"
    r"connected|plugged in|charging|low|hot|cold|armed|disarmed|available|active|idle|home|at home)"
)
# "a limit on my card", "is my flight on time", "anything on the 5th": a preposition, not a state.
_NOT_A_STATE = (
    r"(?! (?:my|your|our|his|her|their|a|an|time|schedule|sale|(?:the )?\d+(?:st|nd|rd|th)?|monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday)\b)"
)
DEVICE_STATE = (
    r"^(?:is|are|was|were|did|does|do|has|have)\b.*\b"
    + _STATE_WORD
    + r"\b"
    + _NOT_A_STATE
    + r"|\b(?:which|what|how many|any|all)\b.*"
    + DEVICE_NOUN
    + r".*\b"
    + _STATE_WORD
    + r"\b"
    r"|\b(?:which|what|how many|any)\b.*\b(?:things?|stuff|everything)\b.*\b" + _STATE_WORD + r"\b"
    r"|\b(?:state|status) of\b"
    # "what's the thermostat set to", "what's the heating reading".
    r"|\b(?:thermostat|heating|heater)\b.*\b(?:set (?:to|at)|reading|showing|says?)$"
    r"|\b(?:humidity|occupancy|motion|smoke|leak|co2|carbon monoxide|moisture|batter(?:y|ies)|"
    r"power usage|energy usage|consumption|rainfall|voltage|wattage|power factor|apparent power|"
    r"stored energy|air quality|aqi|illuminance|lux|download speed|updates? available)\b"
    r"|\b(?:anyone|anybody|someone|somebody|people|who) (?:is |are )?(?:at )?home\b"
    r"|^(?:is|are) (?:anyone|anybody|someone|somebody)\b"
    r"|\b(?:indicated|measured|reported|detected) by\b|\b(?:pm ?\d+(?:\.\d)?|ozone|particulates?|"
    r"irradiance|wet|flooded|flooding|vibrating|solar production)\b"
)
# Asking for the states of several devices as a list, a report or an overview ("give me a status
# report of the lights", "list everything that's on", "what's on right now in the house").
_HOME_WIDE = (
    r"devices?|appliances?|(?:the|my|our|whole|entire) (?:house|home|flat|apartment)"
    r"(?! (?:loans?|prices?|values?|insurance|market|sales?|equity|team|games?|run|address))"
)
_REPORT_WORD = (
    r"status|state|states|report|summary|summari[sz]e|overview|rundown|run ?down|run through|round ?up"
)
_NOW = r"(?: (?:right now|now|at the moment|currently))?"
_SOME_DEVICES = r"(?:" + _ANY_DEVICE + r")s?\b"
_REPORTS = (
    either(_REPORT_WORD, _ANY_DEVICE + r"|" + _HOME_WIDE)
    + r"|\b(?:update|updates) (?:on|of|about) (?:the |my |all (?:the |my )?)(?:\w+ )?"
    + _SOME_DEVICES
    + r"|\b(?:list|show|tell|name|read)\b(?: me)?(?: (?:out|off|all|every|each|which|what|of|on))*"
    r"(?: (?:the|my|our))? (?:\w+ )?"
    + _SOME_DEVICES
    # "check my brake light" is the car's; "check all the locks" asks after several of the home's.
    + r"|\bcheck (?:on )?(?:all|every|each|which|what|whether|if)\b.*\b"
    + _SOME_DEVICES
    # "what's on", "what is open upstairs", "what's running in the house right now".
    + r"|\bwhat(?:'?s| is| are)? (?:still |currently |now |left )?(?:on|open|running|unlocked|switched on|"
    r"turned on|left on|plugged in)"
    + _NOW
    + r"(?: (?:in|at) (?:the |my )?\w+(?: room)?| (?:upstairs|downstairs|inside))?"
    + _NOW
    + r"$|\b(?:anything|everything|something|stuff) (?:still |left |turned |switched )?"
    r"(?:on|off|open|unlocked|running)(?: (?:right now|now|at home|in the house|in here|inside|upstairs|"
    r"downstairs))?$"
    r"|\bhow(?:'s| is| are) (?:the |my |all (?:the |my )?)(?:\w+ )?" + _SOME_DEVICES + r"(?: doing)?$"
    r"|\b(?:status|state|report|summary|overview|rundown) (?:of|on|for) (?:everything|all)"
    r"(?: (?:in the house|at home|right now|now))?$"
    r"|\b(?:list|show|tell|give|read)\b.*\b(?:everything|anything|all|things|stuff|what|which)\b.*"
    r"(?<!going )(?<!carry )\b(?:on|off|open|running|unlocked|locked|closed)$"
)
# Never a timer, the calendar, a flight, an order or an account ("status of my order").
DEVICE_REPORT = (
    r"^(?!.*\b(?:timers?|alarms?|reminders?|calendar|flights?|orders?|accounts?)\b).*(?:" + _REPORTS + ")"
)
MEDIA_CONTROL = (
    r"\b(?:pause|unpause|resume|continue|restart|mute|unmute|skip)\b.*\b(?:music|audio|playing|song|"
    r"track|speaker|tv|media|player|podcast|radio)\b|\bplay(?:ing)? again\b|\b(?:continue|resume) "
    r"playing\b|\bvolume\b|\b(?:playing|paused|stopped)\b.*\b(?:player|speaker|tv)\b"
)
IN_HERE = r"\bin here\b|\b(?:it'?s|too|so|getting) (?:dark|gloomy|dim)\b|\bdarkness\b|\bset the mood\b"
# Temperature is a device reading in a room, and a web question about a place or the outdoors.
INDOOR_TEMPERATURE = (
    r"\b(?:temp|temperature|degrees?|°)\b(?!.*\b(?:outside|outdoors?|forecast|tomorrow|tonight|"
    r"weekend|week)\b)"
    r"|\bhow (?:warm|hot|cold|cool|humid) is (?:it (?:in )?here|it inside|it in the house|(?!it\b)[\w ]+$)"
    r"|^how (?:warm|hot|cold|cool) is it$"
)
OUTDOOR = (
    # "the outside light", "every outdoor lamp": a device outdoors, not the weather.
    r"\b(?:outside|outdoors?|out there)\b(?! (?:lights?|lamps?|lighting|doors?|plugs?|sockets?|outlets?|"
    r"fans?|heaters?|sprinklers?|cameras?|speakers?)\b)"
    r"|\b(?:temperature|degrees|hot|cold|warm|cool|humid|humidity|sticky|nice|climate)\b.*"
    r"\b(?:today|tonight|tomorrow|this (?:week|weekend|morning|afternoon|evening)|next week)\b"
    r"|\b(?:tomorrow|tonight)\b.*\b(?:temperature|degrees|hot|cold|warm|nice)\b"
    r"|\b(?:is it going to|will it|is it gonna) be\b|\bclimate\b"
    r"|\b(?:how (?:hot|cold|warm)|temperature|degrees) (?:is it )?(?:in|at) (?!(?:here|the "
    r"(?:house|room|kitchen|bedroom|bathroom|office|basement|attic|garage|hall|hallway)))\w+"
    # Humidity in a room is a sensor's; in a place ("humidity in seattle") it is the weather's.
    r"|\b(?:humid(?:ity)?|air quality|aqi|rainfall|pollution|smog|pollen count)(?: levels?)?(?: like)?"
    r"(?: is it)? (?:in|at|for|around|near) (?!(?:here|there|the|my|"
    r"our|this|that|every|each|all|inside|indoors|upstairs|downstairs)\b)(?!" + ROOM + r")\w+"
)

TIMER = any_words(
    r"timers?",
    r"alarms?",
    r"count ?down",
    r"stopwatch",
    r"snooze",
    r"calendar",
    r"agenda",
    r"appointments?",
    r"meetings?",
    r"events?",
    r"(?<!on )(?<!of )(?<!behind )schedule",  # "is my flight on schedule" is the flight's
    r"scheduled",
    r"rescheduled?",
    r"diary",
    r"planner",
)
# Asking to be told later outweighs what the reminder is about ("remind me to send the email").
REMIND = (
    r"\bremind(?:er|ers)?\b|\bremaind(?:er)?\b|\bremainder\b|\bwake me\b|\bwake up call\b"
    r"|\bget me up\b|\bremember to\b|\bdon'?t let me forget\b|\bnotify me\b|\balert me\b"
    r"|\bset (?:an? )?(?:alert|notification|alarm|timer)\b|\bremember (?:that|my)\b"
    r"|\blet me know (?:in|at|when it'?s|when it is)\b|\btell me when it(?:'s| is)\b"
)
# Asking outright to be reminded (not "notify me if ...", which is about an event, not a time).
REMIND_ME = r"\bremind(?:er|ers)?\b|\bremaind(?:er)?\b|\bremainder\b|\bdon'?t let me forget\b"
WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|weekday)s?"
MONTH = (
    r"(?:january|february|march|april|june|july|august|september|october|november|december|"
    r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)"
)
_ORDINAL = (
    r"(?:\d{1,2}(?:st|nd|rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
    r"eleventh|twelfth|\w+teenth|twentieth|thirtieth|(?:twenty|thirty)[ -]?(?:first|second|third|"
    r"fourth|fifth|sixth|seventh|eighth|ninth))"
)
# Stretches of one's time that a calendar answers for ("is my afternoon free").
DAYPART = (
    r"day|week|weekend|morning|afternoon|evening|night|schedule|calendar|diary|agenda|month|today|"
    r"tomorrow|tonight|" + WEEKDAY
)
# When, in a question about plans: a day, a part of one, or a date.
WHEN_WORDS = (
    WEEKDAY
    + r"|today|tonight|tomorrow|later|(?:this|next|the rest of the) (?:\w+)|the \d+(?:st|nd|rd|th)?|"
    + MONTH
    + r"|(?:at )?\d{1,2}(?::\d\d)? ?(?:am|pm)?"
)
# Putting something on a day or at an hour: a calendar entry.
CALENDAR_ACTION = (
    r"\b(?:add|set|mark|cancel|delete|remove|block|put|book|plan|move|flag|create|clear|note)\b.*"
    r"(?:\b" + WEEKDAY + r"\b|\b" + MONTH + r"\b|\b(?:tomorrow|tonight|today|next week|every (?:day|"
    r"week|month|year|morning|evening)|" + _ORDINAL + r")\b|\b(?:am|pm|a m|p m|noon|o'clock)\b)"
)
DELAY = (
    r"\b(?:in|after|for) (?:\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|fifteen|"
    r"twenty|thirty|forty|forty five|sixty|ninety|half an?|a couple of|a few) (?:and a half )?"
    r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?)\b"
    r"|\b(?:at|by) (?:\d{1,2}(?::\d\d)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
    r"twelve|noon|midnight)(?: ?(?:am|pm|a m|p m|o'clock|oclock))?\b(?! ?(?:%|percent|per cent|degrees?|°))"
    r"|\b(?:tonight at|every (?:day|morning|evening|night|weekday)|tomorrow morning)\b"
)

# The clock and the calendar date, asked outright.
DATETIME = (
    r"\btime (?:is it|now|right now|please)\b|\bwhat time\b|\bcurrent(?:ly)? time\b|\btime in\b"
    r"|\b(?:tell|give|show|say|let) me the (?:time|date|hour|day)\b|\b(?:present|local|exact) time\b"
    r"|\b(?:date|day) (?:is it|today)\b|\btoday'?s date\b|\bwhat (?:is )?today\b|\btoday is which\b"
    r"|\bis (?:it|today) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
    r"|\bwhat(?:'s| is)? (?:the )?(?:current )?(?:time|date|day|month|year|week)\b"
    r"|\bwhich (?:day|date|month|year)\b"
    r"|\bday of the (?:week|month|year)\b|\btime zone\b"
    r"|^(?:the )?(?:time|date)$"
    r"|\b(?:today|tomorrow|yesterday)'?s date\b|\bwhat date (?:is it|it is|will it be|was it)\b"
    r"|\bo'? ?clock (?:yet|already)\b"
)
# Weaker: calendar arithmetic and questions that mention days or dates.
DATETIME_WEAK = (
    r"\b(?:what|which) day (?:is|was|will|does|falls?)\b|\bhow many (?:days|weeks|months|\w+days) "
    r"(?:until|till|to|left|are|in)\b|\bon (?:a|which) (?:monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)\b|\b(?:is it|what time of) (?:the )?(?:morning|afternoon|evening|night)\b"
    r"|\b(?:afternoon|morning|evening) yet\b|\bwhen is (?:the )?next\b|\b(?:date|day) of\b"
    r"|\bis (?:it|today) (?:the )?\w+(?:st|nd|rd|th)\b"
)
